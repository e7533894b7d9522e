import { createHash } from 'node:crypto';
import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { sendMessage } from '../platform/queue.js';
import { deleteObject } from '../platform/storage.js';
import { isConditionFailure } from '../platform/table.js';
import { onePage, type Page } from '../contacts/paging.js';
import {
  KnowledgeBaseEntity,
  KnowledgeItemEntity,
  ListingRefEntity,
  knowledgeService,
  type KnowledgeBase,
  type KnowledgeItem,
} from './entities.js';
import type { KnowledgeBaseKind, ListingStatus } from './model.js';
import type { ListingBody, ListingPatch } from './schemas.js';
import { fullAddress } from './views.js';

/**
 * Knowledge bases and their listings (documents: documents.ts; the search index: search-index.ts).
 *
 * Every change to a base's items raises the base's `version` afterwards and asks the `knowledge`
 * queue for an index build (`touchBase`): the build reads the version first and the items after, so
 * an item written before a raise is in the index of that version or a later one.
 */

export const KNOWLEDGE_BASE_NOT_FOUND = 'Knowledge base not found';
export const ITEM_NOT_FOUND = 'Item not found';

// ── Knowledge bases ─────────────────────────────────────────────────────────────────────────────────

export async function getKnowledgeBase(
  workspaceId: string,
  knowledgeBaseId: string,
): Promise<KnowledgeBase | null> {
  if (!isId('knowledgeBase', knowledgeBaseId)) return null;
  const { data } = await KnowledgeBaseEntity.get({ workspaceId, knowledgeBaseId }).go({ consistent: true });
  return data;
}

export async function requireKnowledgeBase(
  workspaceId: string,
  knowledgeBaseId: string,
): Promise<KnowledgeBase> {
  const kb = await getKnowledgeBase(workspaceId, knowledgeBaseId);
  if (!kb) throw notFound(KNOWLEDGE_BASE_NOT_FOUND);
  return kb;
}

/** The fields of a new base; `integrationId` for the listings base an integration makes. */
export function newKnowledgeBase(
  workspaceId: string,
  input: { name: string; kind: KnowledgeBaseKind; integrationId?: string },
): KnowledgeBase {
  const now = clock.now().toISOString();
  return {
    workspaceId,
    knowledgeBaseId: newId('knowledgeBase'),
    name: input.name,
    kind: input.kind,
    ...(input.integrationId ? { integrationId: input.integrationId } : {}),
    version: 0,
    itemCount: 0,
    createdAt: now,
    updatedAt: now,
  };
}

export async function createKnowledgeBase(
  workspaceId: string,
  input: { name: string; kind: KnowledgeBaseKind },
): Promise<KnowledgeBase> {
  const { data } = await KnowledgeBaseEntity.create(newKnowledgeBase(workspaceId, input)).go();
  return data as KnowledgeBase;
}

const baseConversions = onFirstUse(() => createConversions(KnowledgeBaseEntity));

export async function listKnowledgeBases(
  workspaceId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<KnowledgeBase>> {
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    run: (options) => KnowledgeBaseEntity.query.byId({ workspaceId }).go(options),
    cursorAfter: (kb) =>
      baseConversions().byAccessPattern.byId.fromComposite.toCursor({
        workspaceId,
        knowledgeBaseId: kb.knowledgeBaseId,
      }),
  });
}

/** The workspace's knowledge bases that exist among `ids` (agents' knowledge_base_ids are checked with it). */
export async function existingKnowledgeBases(workspaceId: string, ids: string[]): Promise<Set<string>> {
  const valid = [...new Set(ids)].filter((id) => isId('knowledgeBase', id));
  if (valid.length === 0) return new Set();
  const { data } = await KnowledgeBaseEntity.get(
    valid.map((knowledgeBaseId) => ({ workspaceId, knowledgeBaseId })),
  ).go({ consistent: true });
  return new Set(data.map((kb) => kb.knowledgeBaseId));
}

export async function renameKnowledgeBase(workspaceId: string, knowledgeBaseId: string, name: string) {
  await requireKnowledgeBase(workspaceId, knowledgeBaseId);
  try {
    const { data } = await KnowledgeBaseEntity.patch({ workspaceId, knowledgeBaseId })
      .set({ name, updatedAt: clock.now().toISOString() })
      .where((attr, op) => op.exists(attr.knowledgeBaseId))
      .go({ response: 'all_new' });
    return data as KnowledgeBase;
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(KNOWLEDGE_BASE_NOT_FOUND);
    throw error;
  }
}

/**
 * Deletes a base and its items (with their listing references). 409 while an integration sends its
 * listings there (`inUse` says so). The base is deleted last, so a delete cut short can be repeated.
 */
export async function deleteKnowledgeBase(
  workspaceId: string,
  knowledgeBaseId: string,
  inUse: (kb: KnowledgeBase) => Promise<boolean>,
): Promise<void> {
  const kb = await requireKnowledgeBase(workspaceId, knowledgeBaseId);
  if (await inUse(kb))
    throw conflict('An integration sends its listings to this knowledge base: delete the integration first');
  const items = await allItems(workspaceId, knowledgeBaseId);
  for (const item of items) await deleteItemRecords(item);
  await KnowledgeBaseEntity.delete({ workspaceId, knowledgeBaseId }).go();
  // Its search index goes with it (a build that was running records nothing: the base is gone).
  if (kb.indexKey) await deleteObject(kb.indexKey);
}

/**
 * Raises the base's version after its items changed, and asks for an index build of it. Returns the
 * new version.
 */
export async function touchBase(workspaceId: string, knowledgeBaseId: string): Promise<void> {
  try {
    await KnowledgeBaseEntity.update({ workspaceId, knowledgeBaseId })
      .add({ version: 1 })
      .set({ updatedAt: clock.now().toISOString() })
      .where((attr, op) => op.exists(attr.knowledgeBaseId))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) return; // deleted meanwhile
    throw error;
  }
  await sendMessage('knowledge', {
    type: 'knowledge.index',
    workspace_id: workspaceId,
    knowledge_base_id: knowledgeBaseId,
  });
}

// ── Items ───────────────────────────────────────────────────────────────────────────────────────────

export async function getItem(
  workspaceId: string,
  knowledgeBaseId: string,
  itemId: string,
): Promise<KnowledgeItem | null> {
  if (!isId('knowledgeItem', itemId)) return null;
  const { data } = await KnowledgeItemEntity.get({ workspaceId, knowledgeBaseId, itemId }).go({
    consistent: true,
  });
  return data;
}

export async function requireItem(workspaceId: string, knowledgeBaseId: string, itemId: string) {
  const item = await getItem(workspaceId, knowledgeBaseId, itemId);
  if (!item) throw notFound(ITEM_NOT_FOUND);
  return item;
}

/** Every item of a base, read consistently (the index build, a base's delete). */
export async function allItems(workspaceId: string, knowledgeBaseId: string): Promise<KnowledgeItem[]> {
  const { data } = await KnowledgeItemEntity.query
    .byBase({ workspaceId, knowledgeBaseId })
    .go({ pages: 'all', consistent: true });
  return data;
}

const itemConversions = onFirstUse(() => createConversions(KnowledgeItemEntity));

export async function listItems(
  workspaceId: string,
  knowledgeBaseId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<KnowledgeItem>> {
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    run: (options) => KnowledgeItemEntity.query.byBase({ workspaceId, knowledgeBaseId }).go(options),
    cursorAfter: (item) =>
      itemConversions().byAccessPattern.byBase.fromComposite.toCursor({
        workspaceId,
        knowledgeBaseId,
        itemId: item.itemId,
      }),
  });
}

/** Deletes an item with its listing references (the one by external id only while it is this item's). */
async function deleteItemRecords(item: KnowledgeItem): Promise<void> {
  const { workspaceId, knowledgeBaseId, itemId } = item;
  await KnowledgeItemEntity.delete({ workspaceId, knowledgeBaseId, itemId }).go();
  if (item.type !== 'listing') return;
  await ListingRefEntity.delete({ workspaceId, ref: itemId }).go();
  if (item.externalId) {
    try {
      await ListingRefEntity.delete({ workspaceId, ref: `ext:${item.externalId}` })
        .where((attr, op) => op.eq(attr.itemId, itemId))
        .go();
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

export async function deleteItem(
  workspaceId: string,
  knowledgeBaseId: string,
  itemId: string,
): Promise<void> {
  const item = await requireItem(workspaceId, knowledgeBaseId, itemId);
  await deleteItemRecords(item);
  await touchBase(workspaceId, knowledgeBaseId);
}

// ── Listings ────────────────────────────────────────────────────────────────────────────────────────

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The id of the listing with this external id in this base: derived from both (a ULID-shaped hash),
 * so a listing written twice by a sync, or created twice, is one item.
 */
export function listingItemId(knowledgeBaseId: string, externalId: string): string {
  const digest = createHash('sha256').update(`${knowledgeBaseId}\n${externalId}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 17)) bits = (bits << 8n) | BigInt(byte);
  let id = '';
  for (let i = 0; i < 26; i += 1) id += CROCKFORD[Number((bits >> BigInt(i * 5)) & 31n)];
  // The first character of a ULID is at most 7 (48-bit time): keep the shape.
  return `kbi_${CROCKFORD[Number(bits & 7n)]}${id.slice(1)}`;
}

/** A listing's stored fields from its body (external id and status included). */
export interface ListingFields {
  externalId?: string;
  address: string;
  suburb?: string;
  state?: string;
  postcode?: string;
  priceText?: string;
  listingStatus: ListingStatus;
  bedrooms?: number;
  bathrooms?: number;
  description?: string;
}

export const listingFields = (body: ListingBody): ListingFields => ({
  externalId: body.external_id,
  address: body.address,
  suburb: body.suburb,
  state: body.state,
  postcode: body.postcode,
  priceText: body.price_text,
  listingStatus: body.status,
  bedrooms: body.bedrooms,
  bathrooms: body.bathrooms,
  description: body.description || undefined,
});

const stripUndefined = <T extends Record<string, unknown>>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/**
 * Writes a new listing with its references; false when an item with its id exists already (a
 * listing of the base with the same external id). Does not touch the base.
 */
async function insertListing(
  kb: Pick<KnowledgeBase, 'workspaceId' | 'knowledgeBaseId'>,
  itemId: string,
  fields: ListingFields & { soldKey?: string; integrationId?: string },
): Promise<KnowledgeItem | undefined> {
  const now = clock.now().toISOString();
  const item = stripUndefined({
    workspaceId: kb.workspaceId,
    knowledgeBaseId: kb.knowledgeBaseId,
    itemId,
    type: 'listing' as const,
    ...fields,
    createdAt: now,
    updatedAt: now,
  }) as KnowledgeItem;
  const refs = { workspaceId: kb.workspaceId, knowledgeBaseId: kb.knowledgeBaseId, itemId };
  const result = await knowledgeService.transaction
    .write(({ knowledgeItem, listingRef }) => [
      knowledgeItem.create(item).commit(),
      listingRef.put({ ...refs, ref: itemId }).commit(),
      ...(fields.externalId ? [listingRef.put({ ...refs, ref: `ext:${fields.externalId}` }).commit()] : []),
    ])
    .go();
  if (result.canceled) {
    if (result.data[0]?.code === 'ConditionalCheckFailed') return undefined;
    throw new Error(`listing write cancelled: ${JSON.stringify(result.data.map((d) => d.code))}`);
  }
  return item;
}

/** POST a listing: 409 when the base has a listing with its external id. */
export async function createListing(kb: KnowledgeBase, body: ListingBody): Promise<KnowledgeItem> {
  const fields = listingFields(body);
  const itemId = fields.externalId
    ? listingItemId(kb.knowledgeBaseId, fields.externalId)
    : newId('knowledgeItem');
  const item = await insertListing(kb, itemId, fields);
  if (!item) throw conflict('A listing with this external_id already exists', { item_id: itemId });
  await touchBase(kb.workspaceId, kb.knowledgeBaseId);
  return item;
}

/** PATCH a listing: given fields set, null ones removed. */
export async function updateListing(item: KnowledgeItem, patch: ListingPatch): Promise<KnowledgeItem> {
  const set: Record<string, unknown> = { updatedAt: clock.now().toISOString() };
  const remove: string[] = [];
  const map: [keyof ListingPatch, keyof KnowledgeItem][] = [
    ['address', 'address'],
    ['suburb', 'suburb'],
    ['state', 'state'],
    ['postcode', 'postcode'],
    ['price_text', 'priceText'],
    ['status', 'listingStatus'],
    ['bedrooms', 'bedrooms'],
    ['bathrooms', 'bathrooms'],
    ['description', 'description'],
  ];
  for (const [wire, stored] of map) {
    const value = patch[wire];
    if (value === undefined) continue;
    if (value === null || value === '') remove.push(stored);
    else set[stored] = value;
  }
  return patchItem(item, set, remove);
}

/** Sets and removes fields of an item that exists (404 when it was deleted meanwhile), then touches its base. */
export async function patchItem(
  item: KnowledgeItem,
  set: Record<string, unknown>,
  remove: string[] = [],
): Promise<KnowledgeItem> {
  const { workspaceId, knowledgeBaseId, itemId } = item;
  let change = KnowledgeItemEntity.patch({ workspaceId, knowledgeBaseId, itemId }).set(set as never);
  if (remove.length > 0) change = change.remove(remove as never);
  try {
    const { data } = await change.go({ response: 'all_new' });
    await touchBase(workspaceId, knowledgeBaseId);
    return data as KnowledgeItem;
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(ITEM_NOT_FOUND);
    throw error;
  }
}

/**
 * Writes listings a sync read from a CRM into a base, each by its external id: created when the base
 * has none with that id, otherwise its fields replaced (a field the CRM no longer has is removed).
 * Safe to repeat (a sync page received twice writes the same items). The base is NOT touched: the
 * sync touches it once when its job ends. Returns each listing's item id and whether it was new.
 */
export async function upsertListing(
  kb: Pick<KnowledgeBase, 'workspaceId' | 'knowledgeBaseId'>,
  fields: ListingFields & { externalId: string; soldKey?: string; integrationId?: string },
): Promise<{ itemId: string; created: boolean }> {
  const itemId = listingItemId(kb.knowledgeBaseId, fields.externalId);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const existing = await getItem(kb.workspaceId, kb.knowledgeBaseId, itemId);
    if (!existing) {
      if (await insertListing(kb, itemId, fields)) return { itemId, created: true };
      continue; // written meanwhile: update it
    }
    const optional = [
      'suburb',
      'state',
      'postcode',
      'priceText',
      'bedrooms',
      'bathrooms',
      'description',
    ] as const;
    const set: Record<string, unknown> = stripUndefined({
      ...fields,
      soldKey: fields.soldKey ?? existing.soldKey,
      updatedAt: clock.now().toISOString(),
    });
    delete set.externalId;
    const remove = optional.filter((key) => fields[key] === undefined && existing[key] !== undefined);
    let change = KnowledgeItemEntity.patch({
      workspaceId: kb.workspaceId,
      knowledgeBaseId: kb.knowledgeBaseId,
      itemId,
    }).set(set as never);
    if (remove.length > 0) change = change.remove([...remove] as never);
    try {
      await change.go();
      return { itemId, created: false };
    } catch (error) {
      if (!isConditionFailure(error)) throw error; // deleted meanwhile: create it again
    }
  }
  throw new Error(`could not write listing ${fields.externalId}`);
}

/**
 * Removes the listing with this external id from a base (a listing deleted in the CRM), with its
 * references. Safe to repeat: a listing that is not there is removed already. The base is NOT
 * touched (the sync touches it once when its job ends). Returns whether it was there.
 */
export async function removeListing(
  kb: Pick<KnowledgeBase, 'workspaceId' | 'knowledgeBaseId'>,
  externalId: string,
): Promise<boolean> {
  const item = await listingByExternalId(kb, externalId);
  if (!item) return false;
  await deleteItemRecords(item);
  return true;
}

/** A listing of a base by its external id (the sync reads what it holds before it writes). */
export async function listingByExternalId(
  kb: Pick<KnowledgeBase, 'workspaceId' | 'knowledgeBaseId'>,
  externalId: string,
): Promise<KnowledgeItem | null> {
  return getItem(kb.workspaceId, kb.knowledgeBaseId, listingItemId(kb.knowledgeBaseId, externalId));
}

/**
 * The full address of a listing of the workspace, by its item id or its external id (the id an
 * agent quoted): the post-call webhook's property entries carry it. Undefined when no listings base
 * of the workspace holds it.
 */
export async function listingAddress(workspaceId: string, listingId: string): Promise<string | undefined> {
  if (!listingId || listingId.length > 300) return undefined;
  const refs = isId('knowledgeItem', listingId) ? [listingId, `ext:${listingId}`] : [`ext:${listingId}`];
  for (const ref of refs) {
    const { data } = await ListingRefEntity.get({ workspaceId, ref }).go();
    if (!data) continue;
    const item = await getItem(workspaceId, data.knowledgeBaseId, data.itemId);
    if (item?.type === 'listing' && item.address) return fullAddress(item);
  }
  return undefined;
}
