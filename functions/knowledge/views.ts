import type { KnowledgeBase, KnowledgeItem } from './entities.js';
import type { ListingStatus } from './model.js';

/** Wire shapes (snake_case) of knowledge bases and their items. */

export function knowledgeBaseView(kb: KnowledgeBase) {
  return {
    id: kb.knowledgeBaseId,
    workspace_id: kb.workspaceId,
    name: kb.name,
    kind: kb.kind,
    item_count: kb.itemCount ?? 0,
    integration_id: kb.integrationId ?? null,
    created_at: kb.createdAt,
    updated_at: kb.updatedAt,
  };
}

/** "12 Harbour St, Manly NSW 2095": the address with its suburb, state and postcode. */
export function fullAddress(
  listing: Pick<KnowledgeItem, 'address' | 'suburb' | 'state' | 'postcode'>,
): string {
  const place = [listing.suburb, listing.state, listing.postcode].filter(Boolean).join(' ');
  return [listing.address, place].filter(Boolean).join(', ');
}

export function itemView(item: KnowledgeItem) {
  const common = {
    id: item.itemId,
    knowledge_base_id: item.knowledgeBaseId,
    type: item.type,
    created_at: item.createdAt,
    updated_at: item.updatedAt,
  };
  if (item.type === 'listing') {
    return {
      ...common,
      external_id: item.externalId ?? null,
      address: item.address ?? '',
      suburb: item.suburb ?? null,
      state: item.state ?? null,
      postcode: item.postcode ?? null,
      full_address: fullAddress(item),
      price_text: item.priceText ?? null,
      status: (item.listingStatus ?? 'available') as ListingStatus,
      bedrooms: item.bedrooms ?? null,
      bathrooms: item.bathrooms ?? null,
      description: item.description ?? null,
    };
  }
  return {
    ...common,
    title: item.title ?? '',
    file_name: item.fileName ?? null,
    content_type: item.contentType ?? null,
    status: item.status ?? 'processing',
    size_bytes: item.sizeBytes ?? null,
    chunks: item.chunkCount ?? null,
    failure_reason: item.failureReason ?? null,
    truncated: item.truncated ?? false,
  };
}
