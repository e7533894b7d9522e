import { HubSpotCrm, type HubSpotObjects } from '../../functions/providers/crm/hubspot.js';

/**
 * The HubSpot adapter's change feed against a stand-in of HubSpot's objects API: the changes by
 * modification time, then a pass over the archived objects that turns those archived since the last
 * pass into deletions (contacts, then listings), resumable page by page from the cursor.
 */

type Obj = { id: string; properties: Record<string, string>; archivedAt?: string };

function fakeHubSpot(state: {
  contacts: Obj[];
  listings: Obj[];
  archived: { contacts: Obj[]; listings: Obj[] };
}) {
  const calls: string[] = [];
  const typeOf = (objectType: string) => (objectType === 'contacts' ? 'contacts' : 'listings');
  const objects: HubSpotObjects = {
    async search(objectType, request) {
      calls.push(`search ${objectType}`);
      const since = Number((request.filterGroups as { filters: { value: string }[] }[])[0].filters[0].value);
      const results = state[typeOf(objectType)].filter(
        (o) => Date.parse(o.properties.hs_lastmodifieddate) > since,
      );
      return { results };
    },
    async archived(objectType, limit, after) {
      calls.push(`archived ${objectType} after ${after ?? '-'}`);
      const all = state.archived[typeOf(objectType)];
      const start = after ? Number(after) : 0;
      const results = all.slice(start, start + limit);
      return {
        results,
        ...(start + limit < all.length ? { paging: { next: { after: String(start + limit) } } } : {}),
      };
    },
  };
  return { objects, calls };
}

const crmWith = (objects: HubSpotObjects) =>
  new HubSpotCrm({
    accessToken: async () => 'token',
    listingObjectType: 'p_listings',
    timeoutMs: 1000,
    objects: async () => objects,
  });

async function readAll(crm: HubSpotCrm, cursor: string | null, limit: number) {
  const records = [];
  let at = cursor;
  for (let i = 0; i < 20; i += 1) {
    const page = await crm.readChanges({ cursor: at, limit });
    records.push(...page.records);
    at = page.cursor;
    if (!page.more) break;
  }
  return { records, cursor: at };
}

test('changes, then deletions from the archived objects; a later pass reports only the newly archived', async () => {
  const state = {
    contacts: [
      {
        id: '11',
        properties: {
          firstname: 'Ann',
          email: 'ann@example.com',
          hs_lastmodifieddate: '2026-01-01T00:00:00Z',
        },
      },
    ],
    listings: [
      {
        id: '21',
        properties: {
          external_id: 'L-1',
          address: '1 A St',
          status: 'available',
          hs_lastmodifieddate: '2026-01-01T00:00:00Z',
        },
      },
    ],
    archived: {
      contacts: [
        { id: '12', properties: {}, archivedAt: '2026-01-02T00:00:00Z' },
        { id: '13', properties: {}, archivedAt: '2026-01-03T00:00:00Z' },
        { id: '14', properties: {}, archivedAt: '2026-01-01T12:00:00Z' },
      ],
      listings: [{ id: '22', properties: { external_id: 'L-2' }, archivedAt: '2026-01-02T00:00:00Z' }],
    },
  };
  const { objects } = fakeHubSpot(state);
  const crm = crmWith(objects);
  const first = await readAll(crm, null, 2);
  expect(first.records).toEqual([
    { kind: 'contact', contact: expect.objectContaining({ external_id: '11', first_name: 'Ann' }) },
    { kind: 'listing', listing: expect.objectContaining({ external_id: 'L-1' }) },
    { kind: 'contact_deleted', external_id: '12' },
    { kind: 'contact_deleted', external_id: '13' },
    { kind: 'contact_deleted', external_id: '14' },
    { kind: 'listing_deleted', external_id: 'L-2' },
  ]);

  // Nothing new: a pass reports nothing again.
  const second = await readAll(crm, first.cursor, 2);
  expect(second.records).toEqual([]);
  expect(crm.compareCursors(second.cursor!, first.cursor!)).toBe(0);

  // Archived later: only that one; the cursor moved on.
  state.archived.contacts.push({ id: '15', properties: {}, archivedAt: '2026-02-01T00:00:00Z' });
  const third = await readAll(crm, second.cursor, 2);
  expect(third.records).toEqual([{ kind: 'contact_deleted', external_id: '15' }]);
  expect(crm.compareCursors(third.cursor!, second.cursor!)).toBeGreaterThan(0);
  expect(crm.compareCursors(second.cursor!, third.cursor!)).toBeLessThan(0);
});
