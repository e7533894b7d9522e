/**
 * The CRM port: a property and contact system an integration reads. Its terms are the CRM's own
 * (external ids, a listing's status and sale time); the integrations domain maps them onto listings
 * in a knowledge base and onto contacts.
 *
 * Changes are read as a feed: `readChanges({cursor: null})` starts at the beginning (every record as
 * it is now, or as it changed), and each page hands back the cursor to read on from. Cursors are
 * opaque to callers, but an adapter can say whether one is behind another (`compareCursors`): a CRM
 * restored from a backup, or a feed replayed, can hand back a cursor that goes backwards.
 */

export const LISTING_STATUSES = ['available', 'under_offer', 'sold'] as const;

export interface CrmListing {
  external_id: string;
  address: string;
  suburb?: string;
  state?: string;
  postcode?: string;
  price_text?: string;
  status: (typeof LISTING_STATUSES)[number];
  bedrooms?: number;
  bathrooms?: number;
  description?: string;
  /** When it was sold (ISO 8601), for a listing whose status is sold: names the sale. */
  sold_at?: string;
}

export interface CrmContact {
  external_id: string;
  first_name?: string;
  last_name?: string;
  /** As the CRM holds it (E.164 or national). */
  phone?: string;
  email?: string;
}

/**
 * One change of the feed: a listing or contact as it now is, or one deleted in the CRM (by its
 * external id; a CRM that cannot report deletions never sends these).
 */
export type CrmRecord =
  | { kind: 'listing'; listing: CrmListing }
  | { kind: 'contact'; contact: CrmContact }
  | { kind: 'listing_deleted'; external_id: string }
  | { kind: 'contact_deleted'; external_id: string };

export interface CrmChangePage {
  records: CrmRecord[];
  /** Where to read on from (after this page). */
  cursor: string;
  /** More changes are there now. */
  more: boolean;
  /** How many changes are left after this page, when the CRM knows (progress). */
  remaining?: number;
}

export interface CrmProvider {
  readonly name: 'demo_crm' | 'hubspot';
  readChanges(input: { cursor: string | null; limit: number }): Promise<CrmChangePage>;
  /** Negative when `a` is behind `b`, 0 when equal, positive when ahead. */
  compareCursors(a: string, b: string): number;
}

/** The CRM did not answer, or answered with an error: the sync tries again later. */
export class CrmProviderError extends Error {
  override readonly name = 'CrmProviderError';
}
