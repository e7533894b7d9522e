import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import { clock } from '../platform/clock.js';
import { BUCKET } from '../platform/resources.js';
import { logger } from '../platform/logger.js';
import { deleteObject, getObject, putObject } from '../platform/storage.js';
import { isConditionFailure } from '../platform/table.js';
import {
  KnowledgeBaseEntity,
  KnowledgeItemEntity,
  type KnowledgeBase,
  type KnowledgeItem,
} from './entities.js';
import type { ListingStatus } from './model.js';
import { allItems, getKnowledgeBase } from './service.js';
import { fullAddress } from './views.js';

/**
 * The search index of a knowledge base: MiniSearch (BM25 ranking, prefix and fuzzy matching) over
 * one entry per listing and one per passage of a document. Built whole by the `knowledge` queue's
 * worker from the base's items after they change (`buildIndex`), written to the bucket as JSON, one
 * object per base version (`knowledge/<ws>/<kb>/index/<version>.json`), and recorded on the base
 * (`indexedVersion`, `indexKey`). A search reads the base (one GetItem) and uses the index of its
 * `indexKey`, loaded from the bucket once per container and kept while the base's index stays the
 * same (a later version is loaded when the base says so).
 */

interface IndexEntry {
  id: string;
  itemId: string;
  type: 'listing' | 'document';
  title: string;
  text: string;
  place?: string;
  listing?: ListingSummary;
}

interface ListingSummary {
  external_id: string | null;
  full_address: string;
  price_text: string | null;
  status: ListingStatus;
  bedrooms: number | null;
  bathrooms: number | null;
}

/**
 * English words too common to tell items apart: not indexed, not searched (every listing "has" and
 * "is close to"; matching them would only make every search score most of the base).
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have in into is it its of on or our so than that the their ' +
    'then there these this to was were will with you your'
  ).split(' '),
);

/**
 * The same options build and load an index (MiniSearch requires it). A term matches words it begins
 * (from 3 characters) and words one edit away (from 5 characters: shorter ones would match too much).
 */
export const INDEX_OPTIONS: Options<IndexEntry> = {
  fields: ['title', 'text', 'place'],
  storeFields: ['itemId', 'type', 'title', 'text', 'listing'],
  processTerm: (term) => {
    const lower = term.toLowerCase();
    return STOP_WORDS.has(lower) ? null : lower;
  },
  searchOptions: {
    boost: { title: 2, place: 1.5 },
    prefix: (term) => term.length >= 3,
    fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
    combineWith: 'OR',
  },
};

export const indexKeyOf = (workspaceId: string, knowledgeBaseId: string, version: number) =>
  `${BUCKET.uploadsPrefix}knowledge/${workspaceId}/${knowledgeBaseId}/index/${String(version).padStart(10, '0')}.json`;

function listingEntry(item: KnowledgeItem): IndexEntry {
  const address = fullAddress(item);
  const facts = [
    item.priceText,
    item.bedrooms !== undefined ? `${item.bedrooms} bedrooms` : undefined,
    item.bathrooms !== undefined ? `${item.bathrooms} bathrooms` : undefined,
    item.listingStatus?.replace('_', ' '),
    item.externalId,
  ].filter(Boolean);
  return {
    id: item.itemId,
    itemId: item.itemId,
    type: 'listing',
    title: address,
    text: [item.description, facts.join(', ')].filter(Boolean).join('\n'),
    place: [item.suburb, item.state, item.postcode].filter(Boolean).join(' '),
    listing: {
      external_id: item.externalId ?? null,
      full_address: address,
      price_text: item.priceText ?? null,
      status: (item.listingStatus ?? 'available') as ListingStatus,
      bedrooms: item.bedrooms ?? null,
      bathrooms: item.bathrooms ?? null,
    },
  };
}

/** The passages of a document whose text was extracted (in the bucket at its chunksKey). */
async function documentEntries(item: KnowledgeItem): Promise<IndexEntry[]> {
  if (!item.chunksKey || item.status === 'failed') return [];
  const file = await getObject(item.chunksKey);
  if (!file) return [];
  const { chunks } = JSON.parse(Buffer.from(file).toString('utf8')) as { chunks: string[] };
  return chunks.map((text, i) => ({
    id: `${item.itemId}#${i}`,
    itemId: item.itemId,
    type: 'document',
    title: item.title ?? '',
    text,
  }));
}

export function newIndex(entries: IndexEntry[] = []): MiniSearch<IndexEntry> {
  const index = new MiniSearch<IndexEntry>(INDEX_OPTIONS);
  index.addAll(entries);
  return index;
}

/** Entries of items (listings as they are, documents from their passages in the bucket). */
export async function entriesOf(items: KnowledgeItem[]): Promise<IndexEntry[]> {
  const entries: IndexEntry[] = [];
  const documents = items.filter((item) => item.type === 'document');
  for (const item of items) if (item.type === 'listing') entries.push(listingEntry(item));
  for (let i = 0; i < documents.length; i += 8) {
    const batch = await Promise.all(documents.slice(i, i + 8).map(documentEntries));
    entries.push(...batch.flat());
  }
  return entries;
}

/**
 * Builds the base's index for its current version when it has none for it yet; then marks the
 * documents whose passages it holds `ready`. Safe to run twice or concurrently (the base records
 * only a newer index).
 */
export async function buildIndex(workspaceId: string, knowledgeBaseId: string): Promise<string> {
  const kb = await getKnowledgeBase(workspaceId, knowledgeBaseId);
  if (!kb) return 'no such knowledge base';
  const version = kb.version;
  if (kb.indexedVersion !== undefined && kb.indexedVersion >= version) {
    await markReady(kb, await allItems(workspaceId, knowledgeBaseId));
    return `index v${kb.indexedVersion} is current`;
  }
  const items = await allItems(workspaceId, knowledgeBaseId);
  const index = newIndex(await entriesOf(items));
  const key = indexKeyOf(workspaceId, knowledgeBaseId, version);
  await putObject(key, JSON.stringify(index), 'application/json');
  let previousKey: string | undefined;
  try {
    const { data: before } = await KnowledgeBaseEntity.patch({ workspaceId, knowledgeBaseId })
      .set({ indexedVersion: version, indexKey: key, itemCount: items.length })
      .where((attr, op) => `${op.notExists(attr.indexedVersion)} OR ${op.lt(attr.indexedVersion, version)}`)
      .go({ response: 'all_old' });
    previousKey = (before as Partial<KnowledgeBase> | null)?.indexKey;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Never recorded, so never searched: this build's object goes (unless a build of the same version won).
    const current = await getKnowledgeBase(workspaceId, knowledgeBaseId);
    if (current?.indexKey !== key) await deleteObject(key);
    return `a newer index was recorded meanwhile (v${version} not used)`;
  }
  // The superseded index goes once the new one is live (see retireIndex).
  if (previousKey && previousKey !== key) await retireIndex(previousKey);
  await markReady(kb, items);
  return `indexed v${version}: ${items.length} items, ${index.documentCount} entries`;
}

/**
 * Deletes an index object no base points at any more (superseded by a newer build, or its base
 * deleted). Safe for searches in flight: a container that loaded it keeps it in memory until its
 * base names another key, and one that reads the old key after the delete finds no object, reads the
 * base again and loads the key it names now (`loadIndex`).
 */
export async function retireIndex(key: string): Promise<void> {
  try {
    await deleteObject(key);
  } catch (error) {
    // A leftover object costs a little storage; the build that made the new index stands.
    logger.warn('superseded knowledge index not deleted', { key, error: String(error) });
  }
}

/** Documents whose text is in the index now: processing → ready. */
async function markReady(kb: KnowledgeBase, items: KnowledgeItem[]): Promise<void> {
  const now = clock.now().toISOString();
  for (const item of items) {
    if (item.type !== 'document' || item.status !== 'processing' || !item.extractedAt) continue;
    try {
      await KnowledgeItemEntity.patch({
        workspaceId: kb.workspaceId,
        knowledgeBaseId: kb.knowledgeBaseId,
        itemId: item.itemId,
      })
        .set({ status: 'ready', updatedAt: now })
        .where((attr, op) => op.eq(attr.status, 'processing'))
        .go();
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

// ── Searching ───────────────────────────────────────────────────────────────────────────────────────

/** Indexes loaded in this container, by base: kept while the base's indexKey stays the same. */
const loaded = new Map<string, { key: string; index: Promise<MiniSearch<IndexEntry>> }>();
const MAX_LOADED = 50;

/** Test hook: this container forgets the indexes it loaded (as a new container would start). */
export function forgetLoadedIndexes(): void {
  loaded.clear();
}

/** Thrown inside a load when the base's index object is gone (a newer build retired it meanwhile). */
class IndexRetired extends Error {}

function loadIndex(kb: KnowledgeBase): Promise<MiniSearch<IndexEntry>> | undefined {
  const key = kb.indexKey;
  if (!key) return undefined;
  const cached = loaded.get(kb.knowledgeBaseId);
  if (cached?.key === key) return cached.index;
  const index = getObject(key).then((bytes) => {
    if (!bytes) throw new IndexRetired(key);
    return MiniSearch.loadJSON<IndexEntry>(Buffer.from(bytes).toString('utf8'), INDEX_OPTIONS);
  });
  index.catch(() => {
    if (loaded.get(kb.knowledgeBaseId)?.index === index) loaded.delete(kb.knowledgeBaseId);
  });
  if (loaded.size >= MAX_LOADED) loaded.delete(loaded.keys().next().value!);
  loaded.set(kb.knowledgeBaseId, { key, index });
  return index;
}

export interface SearchHit {
  id: string;
  item_id: string;
  type: 'listing' | 'document';
  title: string;
  score: number;
  passage: string;
  listing?: ListingSummary;
}

/** Items ranked best first, each with its best passage (a window around the first matching term). */
export function rank(index: MiniSearch<IndexEntry>, q: string, limit: number): SearchHit[] {
  const results = index.search(q);
  const best = new Map<string, SearchResult>();
  for (const result of results) {
    const itemId = result.itemId as string;
    if (!best.has(itemId)) best.set(itemId, result);
    if (best.size >= limit) break;
  }
  return [...best.values()].map((result) => ({
    id: result.itemId as string,
    item_id: result.itemId as string,
    type: result.type as 'listing' | 'document',
    title: result.title as string,
    score: Math.round(result.score * 1000) / 1000,
    passage: passageOf(result.text as string, result.terms),
    ...(result.listing ? { listing: result.listing as ListingSummary } : {}),
  }));
}

const PASSAGE_LENGTH = 300;

function passageOf(text: string, terms: string[]): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= PASSAGE_LENGTH) return clean;
  const lower = clean.toLowerCase();
  const at = Math.min(
    ...terms.map((t) => lower.indexOf(t.toLowerCase())).filter((i) => i >= 0),
    clean.length,
  );
  const start = at === clean.length ? 0 : Math.max(0, at - 80);
  const cut = clean.slice(start, start + PASSAGE_LENGTH);
  return `${start > 0 ? '…' : ''}${cut}${start + PASSAGE_LENGTH < clean.length ? '…' : ''}`;
}

/** A search of a base (read by the caller): its index as of its last build. */
export async function searchBase(kb: KnowledgeBase, q: string, limit: number): Promise<SearchHit[]> {
  let base = kb;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const index = loadIndex(base);
    if (!index) return [];
    try {
      return rank(await index, q, limit);
    } catch (error) {
      if (!(error instanceof IndexRetired)) throw error;
      // Retired after the base was read: the base names the index that replaced it.
      const fresh = await getKnowledgeBase(kb.workspaceId, kb.knowledgeBaseId);
      if (!fresh?.indexKey || fresh.indexKey === base.indexKey) return [];
      base = fresh;
    }
  }
  return [];
}
