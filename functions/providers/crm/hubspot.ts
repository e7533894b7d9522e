import {
  CrmProviderError,
  type CrmChangePage,
  type CrmContact,
  type CrmListing,
  type CrmProvider,
} from './port.js';

/**
 * HubSpot, through its official client (`@hubspot/api-client`: its CRM-objects search API, imported
 * when first used). Credentials: a private app's access token from Secrets
 * Manager (the `crm` secret, JSON `{"hubspot": {"<account>": "<token>"}}`; `account` is the
 * integration's config). Contacts are HubSpot contacts; listings are the custom object named by
 * `listingObjectType` (e.g. `p_listings`) with properties named as our listing fields.
 *
 * The change feed is HubSpot's search API sorted by `hs_lastmodifieddate`: the cursor is the last
 * modification time read for each object type (`{"contacts": ms, "listings": ms}`, base64url JSON);
 * a page reads the contacts changed after their time, then the listings changed after theirs.
 *
 * Deletions: the search API never returns archived (deleted) objects, so once the changes are read
 * the feed goes through the archived ones (the objects API with `archived=true`, which pages by id,
 * not by time): first contacts, then listings, a page per read, each object archived after the
 * time the previous pass reached becoming a `contact_deleted` / `listing_deleted` record. The pass's
 * place is in the cursor (`scan`: the type, HubSpot's `after` and the latest archive time seen); when
 * a type's pass ends, its time (`deleted`) moves on to the latest seen. Every sync passes over the
 * archived objects (HubSpot keeps them 90 days) at one read per 100.
 * Never run locally (the demo CRM stands in for it).
 */
type ObjectType = 'contacts' | 'listings';
type Cursor = {
  contacts: number;
  listings: number;
  /** Archive time each type's last completed pass over the archived objects reached. */
  deleted?: { contacts: number; listings: number };
  /** The pass under way. */
  scan?: { type: ObjectType; after?: string; max: number };
};

type HubSpotObject = {
  id: string;
  properties: Record<string, string | null | undefined>;
  archivedAt?: Date | string;
};
type HubSpotPage = { results: HubSpotObject[]; paging?: { next?: { after?: string } } };

/** The two calls of HubSpot's CRM-objects API the adapter makes (a test hands its own). */
export interface HubSpotObjects {
  search(objectType: string, request: Record<string, unknown>): Promise<HubSpotPage>;
  archived(
    objectType: string,
    limit: number,
    after: string | undefined,
    properties: string[],
  ): Promise<HubSpotPage>;
}

const LISTING_PROPERTIES = [
  'external_id',
  'address',
  'suburb',
  'state',
  'postcode',
  'price_text',
  'status',
  'bedrooms',
  'bathrooms',
  'description',
  'sold_at',
  'hs_lastmodifieddate',
];

export class HubSpotCrm implements CrmProvider {
  readonly name = 'hubspot' as const;

  constructor(
    private readonly settings: {
      accessToken: () => Promise<string>;
      listingObjectType?: string;
      timeoutMs: number;
      /** The objects API (default: the official client's). */
      objects?: () => Promise<HubSpotObjects>;
    },
  ) {}

  /**
   * The client's CRM-objects search and basic APIs (its generated module for `crm/v3/objects`, which
   * serves contacts and custom objects alike) rather than the whole client: a fraction of the bundle.
   */
  private async objects(): Promise<HubSpotObjects> {
    if (this.settings.objects) return this.settings.objects();
    const { createConfiguration, SearchApi, BasicApi } =
      await import('@hubspot/api-client/lib/codegen/crm/objects/index.js');
    const accessToken = await this.settings.accessToken();
    const configuration = createConfiguration({ authMethods: { oauth2: { accessToken } } });
    const search = new SearchApi(configuration);
    const basic = new BasicApi(configuration);
    return {
      search: (objectType, request) => search.doSearch(objectType, request as never),
      archived: (objectType, limit, after, properties) =>
        basic.getPage(objectType, limit, after, properties, undefined, undefined, true),
    };
  }

  static decode(cursor: string | null): Cursor {
    if (!cursor) return { contacts: 0, listings: 0 };
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
  }

  static encode(cursor: Cursor): string {
    return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
  }

  async readChanges(input: { cursor: string | null; limit: number }): Promise<CrmChangePage> {
    const cursor = HubSpotCrm.decode(input.cursor);
    const api = await this.objects();
    const since = (ms: number) => ({
      filterGroups: [
        { filters: [{ propertyName: 'hs_lastmodifieddate', operator: 'GT' as never, value: String(ms) }] },
      ],
      sorts: ['hs_lastmodifieddate'],
      limit: Math.min(100, input.limit),
      after: '0',
    });
    try {
      const contacts = await api.search('contacts', {
        ...since(cursor.contacts),
        properties: ['firstname', 'lastname', 'phone', 'mobilephone', 'email', 'hs_lastmodifieddate'],
      });
      const records: CrmChangePage['records'] = contacts.results.map((c) => ({
        kind: 'contact' as const,
        contact: {
          external_id: c.id,
          first_name: c.properties.firstname ?? undefined,
          last_name: c.properties.lastname ?? undefined,
          phone: c.properties.mobilephone ?? c.properties.phone ?? undefined,
          email: c.properties.email ?? undefined,
        } satisfies CrmContact,
      }));
      const next = { ...cursor };
      const last = contacts.results.at(-1);
      if (last) next.contacts = Date.parse(last.properties.hs_lastmodifieddate ?? '') || next.contacts;
      let listingsMore = false;
      if (this.settings.listingObjectType && records.length < input.limit) {
        const listings = await api.search(this.settings.listingObjectType, {
          ...since(cursor.listings),
          properties: LISTING_PROPERTIES,
        });
        for (const l of listings.results) {
          const p = l.properties;
          const status =
            (['available', 'under_offer', 'sold'] as const).find((s) => s === p.status) ?? 'available';
          records.push({
            kind: 'listing',
            listing: {
              external_id: p.external_id || l.id,
              address: p.address ?? '',
              suburb: p.suburb ?? undefined,
              state: p.state ?? undefined,
              postcode: p.postcode ?? undefined,
              price_text: p.price_text ?? undefined,
              status,
              bedrooms: p.bedrooms ? Number(p.bedrooms) : undefined,
              bathrooms: p.bathrooms ? Number(p.bathrooms) : undefined,
              description: p.description ?? undefined,
              sold_at: p.sold_at ?? undefined,
            } satisfies CrmListing,
          });
        }
        const lastListing = listings.results.at(-1);
        if (lastListing)
          next.listings = Date.parse(lastListing.properties.hs_lastmodifieddate ?? '') || next.listings;
        listingsMore = Boolean(listings.paging?.next);
      }
      const more = Boolean(contacts.paging?.next) || listingsMore;
      if (more || records.length > 0) return { records, cursor: HubSpotCrm.encode(next), more: true };
      // Changes all read: a page of the pass over the archived objects.
      return await this.readDeletions(api, next, input.limit);
    } catch (error) {
      throw new CrmProviderError(`HubSpot refused the read: ${(error as Error).message}`, { cause: error });
    }
  }

  /** One page of the pass over the archived objects (see above). */
  private async readDeletions(api: HubSpotObjects, cursor: Cursor, limit: number): Promise<CrmChangePage> {
    const deleted = cursor.deleted ?? { contacts: 0, listings: 0 };
    const scan = cursor.scan ?? { type: 'contacts' as const, max: deleted.contacts };
    const objectType = scan.type === 'contacts' ? 'contacts' : this.settings.listingObjectType;
    const done = (next: Cursor): CrmChangePage => ({
      records: [],
      cursor: HubSpotCrm.encode(next),
      more: false,
    });
    if (!objectType) return done({ ...cursor, deleted, scan: undefined });
    const page = await api.archived(
      objectType,
      Math.min(100, limit),
      scan.after,
      scan.type === 'listings' ? ['external_id'] : [],
    );
    const records: CrmChangePage['records'] = [];
    let max = scan.max;
    for (const object of page.results) {
      const at = object.archivedAt ? new Date(object.archivedAt).getTime() : 0;
      if (!(at > deleted[scan.type])) continue; // announced by an earlier pass
      max = Math.max(max, at);
      records.push(
        scan.type === 'contacts'
          ? { kind: 'contact_deleted', external_id: object.id }
          : { kind: 'listing_deleted', external_id: object.properties.external_id || object.id },
      );
    }
    const after = page.paging?.next?.after;
    if (after)
      return {
        records,
        cursor: HubSpotCrm.encode({ ...cursor, deleted, scan: { ...scan, after, max } }),
        more: true,
      };
    const finished = { ...deleted, [scan.type]: max };
    const nextScan =
      scan.type === 'contacts' && this.settings.listingObjectType
        ? { type: 'listings' as const, max: finished.listings }
        : undefined;
    return {
      records,
      cursor: HubSpotCrm.encode({ ...cursor, deleted: finished, scan: nextScan }),
      more: nextScan !== undefined,
    };
  }

  compareCursors(a: string, b: string): number {
    const x = HubSpotCrm.decode(a);
    const y = HubSpotCrm.decode(b);
    return (
      Math.sign(x.contacts - y.contacts) ||
      Math.sign(x.listings - y.listings) ||
      Math.sign((x.deleted?.contacts ?? 0) - (y.deleted?.contacts ?? 0)) ||
      Math.sign((x.deleted?.listings ?? 0) - (y.deleted?.listings ?? 0))
    );
  }
}
