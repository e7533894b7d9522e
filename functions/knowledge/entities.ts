import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { primaryIndex } from '../platform/keys.js';
import { entityConfig } from '../platform/table.js';
import { ITEM_STATUSES, KNOWLEDGE_BASE_KINDS, LISTING_STATUSES } from './model.js';

/**
 * Knowledge bases, their items, and the references that find a listing by its id or external id.
 *
 * Access patterns (key → use):
 *   knowledge base  pk WS#<ws>                  sk KB#<kb>                   get by id; the workspace's list
 *   item            pk WS#<ws>#KB#<kb>          sk ITEM#<item>               get by id; a base's items (consistent
 *                                                                            Query: the index build reads them all)
 *   listing ref     pk WS#<ws>                  sk LISTINGREF#<item id>      which base holds a listing (post-call:
 *                                                                            the full address by listing id)
 *                   pk WS#<ws>                  sk LISTINGREF#ext:<ext id>   the same by the listing's external id
 *
 * A listing with an external id has an id derived from its base and external id (service.ts
 * `listingItemId`), so the same external listing written twice (a sync page received again) is the
 * same item: its create is conditioned on its absence and a second one becomes an update.
 *
 * The search index is not in the table: it is built from the items by the `knowledge` queue's worker
 * and kept in the bucket, one object per base and version (search-index.ts). `version` is raised
 * after items change; `indexedVersion` is the version of the index searches read.
 */
const cfg = entityConfig();

export const KnowledgeBaseEntity = new Entity(
  {
    model: { entity: 'knowledgeBase', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      knowledgeBaseId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      kind: { type: KNOWLEDGE_BASE_KINDS, required: true },
      /** The integration whose listings this base receives (it made the base). */
      integrationId: { type: 'string' },
      /** Raised after its items change; the index is rebuilt for the new version. */
      version: { type: 'number', required: true, default: 0 },
      /** The version of the index in the bucket (absent: none built yet). */
      indexedVersion: { type: 'number' },
      indexKey: { type: 'string' },
      /** Items counted by the last index build. */
      itemCount: { type: 'number', required: true, default: 0 },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['knowledgeBaseId'], 'KB#${knowledgeBaseId}'),
    },
  },
  cfg,
);

export const KnowledgeItemEntity = new Entity(
  {
    model: { entity: 'knowledgeItem', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      knowledgeBaseId: { type: 'string', required: true },
      itemId: { type: 'string', required: true },
      type: { type: ['listing', 'document'] as const, required: true },
      // ── listings ──
      externalId: { type: 'string' },
      address: { type: 'string' },
      suburb: { type: 'string' },
      state: { type: 'string' },
      postcode: { type: 'string' },
      priceText: { type: 'string' },
      listingStatus: { type: LISTING_STATUSES },
      bedrooms: { type: 'number' },
      bathrooms: { type: 'number' },
      description: { type: 'string' },
      /** The sale a `listing.sold` event was published (or, in an initial sync, passed over) for. */
      soldKey: { type: 'string' },
      /** The integration that wrote it last. */
      integrationId: { type: 'string' },
      // ── documents ──
      title: { type: 'string' },
      fileName: { type: 'string' },
      contentType: { type: 'string' },
      /** The uploaded (or posted) file in the bucket. */
      objectKey: { type: 'string' },
      status: { type: ITEM_STATUSES },
      failureReason: { type: 'string' },
      sizeBytes: { type: 'number' },
      /** Passages the extracted text was cut into (in the bucket at chunksKey). */
      chunkCount: { type: 'number' },
      chunksKey: { type: 'string' },
      /** Characters of text extracted; `truncated` when the text was cut at MAX_EXTRACTED_CHARS. */
      textLength: { type: 'number' },
      truncated: { type: 'boolean' },
      /** Upload checks made while waiting for the file (presigned PUT). */
      uploadChecks: { type: 'number' },
      extractedAt: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
    },
    indexes: {
      byBase: primaryIndex(
        ['workspaceId', 'knowledgeBaseId'],
        'WS#${workspaceId}#KB#${knowledgeBaseId}',
        ['itemId'],
        'ITEM#${itemId}',
      ),
    },
  },
  cfg,
);

/** Which base holds a listing: by its item id (`ref` = the id) or external id (`ref` = `ext:<id>`). */
export const ListingRefEntity = new Entity(
  {
    model: { entity: 'listingRef', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      ref: { type: 'string', required: true },
      knowledgeBaseId: { type: 'string', required: true },
      itemId: { type: 'string', required: true },
    },
    indexes: {
      byRef: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['ref'], 'LISTINGREF#${ref}'),
    },
  },
  cfg,
);

export const knowledgeService = new Service(
  { knowledgeBase: KnowledgeBaseEntity, knowledgeItem: KnowledgeItemEntity, listingRef: ListingRefEntity },
  cfg,
);

export type KnowledgeBase = EntityItem<typeof KnowledgeBaseEntity>;
export type KnowledgeItem = EntityItem<typeof KnowledgeItemEntity>;
