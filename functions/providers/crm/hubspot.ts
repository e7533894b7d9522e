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
 * Never run locally (the demo CRM stands in for it).
 */
type Cursor = { contacts: number; listings: number };

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
    },
  ) {}

  /**
   * The client's CRM-objects search API (its generated module for `crm/v3/objects`, which serves
   * contacts and custom objects alike) rather than the whole client: a fraction of the bundle.
   */
  private async search() {
    const { createConfiguration, SearchApi } =
      await import('@hubspot/api-client/lib/codegen/crm/objects/index.js');
    const accessToken = await this.settings.accessToken();
    return new SearchApi(createConfiguration({ authMethods: { oauth2: { accessToken } } }));
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
    const search = await this.search();
    const since = (ms: number) => ({
      filterGroups: [
        { filters: [{ propertyName: 'hs_lastmodifieddate', operator: 'GT' as never, value: String(ms) }] },
      ],
      sorts: ['hs_lastmodifieddate'],
      limit: Math.min(100, input.limit),
      after: '0',
    });
    try {
      const contacts = await search.doSearch('contacts', {
        ...since(cursor.contacts),
        properties: ['firstname', 'lastname', 'phone', 'mobilephone', 'email', 'hs_lastmodifieddate'],
      } as never);
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
        const listings = await search.doSearch(this.settings.listingObjectType, {
          ...since(cursor.listings),
          properties: LISTING_PROPERTIES,
        } as never);
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
      return {
        records,
        cursor: HubSpotCrm.encode(next),
        more: Boolean(contacts.paging?.next) || listingsMore,
      };
    } catch (error) {
      throw new CrmProviderError(`HubSpot refused the read: ${(error as Error).message}`, { cause: error });
    }
  }

  compareCursors(a: string, b: string): number {
    const x = HubSpotCrm.decode(a);
    const y = HubSpotCrm.decode(b);
    return Math.sign(x.contacts - y.contacts) || Math.sign(x.listings - y.listings);
  }
}
