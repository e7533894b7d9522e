import { api, type Json } from '../../helpers/http.js';
import {
  allPages,
  contactPath,
  contactsPath,
  createContact,
  inBatches,
  issues,
  newTenant,
  type Tenant,
} from './fixtures.js';

/**
 * Listing contacts: newest first, 50 a page with next_cursor; `q` a prefix of the first, last or full
 * name, the email address or the phone number (E.164, digits, national form), each contact once;
 * filters by contactability, source and tag, alone, together and with `q`, across pages.
 */

let tenant: Tenant;
const people: Record<string, Json> = {};

beforeAll(async () => {
  tenant = await newTenant();
  const suffix = tenant.workspaceId.slice(-6).toLowerCase();
  people.sam = await createContact(tenant, {
    first_name: 'Sam',
    last_name: 'Smith',
    phone: '+61491570101',
    email: `sam.smith-${suffix}@example.com`,
    tags: ['VIP'],
  });
  people.samantha = await createContact(tenant, {
    first_name: 'Samantha',
    last_name: 'Jones',
    email: `samj-${suffix}@example.org`,
    source: 'csv',
    tags: ['buyer'],
  });
  people.jose = await createContact(tenant, {
    first_name: 'José',
    last_name: 'Álvarez',
    phone: '0491 570 102',
    contactability: 'do_not_contact',
    source: 'vcf',
  });
  people.bob = await createContact(tenant, {
    first_name: 'Bob',
    last_name: "O'Brien",
    phone: '+61 491 570 123',
    email: `bob-${suffix}@sam.example.com`,
    tags: ['buyer', 'VIP'],
  });
  people.alex = await createContact(tenant, {
    first_name: 'Alex',
    last_name: 'Samson',
    phone: '+61491570104',
  });
});

const ids = (items: Json[]) => items.map((c: Json) => c.id as string);
const list = async (query: Record<string, string>) => {
  const { items } = await allPages(contactsPath(tenant), tenant.owner.token, query);
  return items;
};
const names = (items: Json[]) => items.map((c: Json) => `${c.first_name} ${c.last_name}`).sort();

describe('q', () => {
  it('matches a prefix of the first, last or full name, case- and accent-insensitive, each contact once', async () => {
    expect(names(await list({ q: 'sam' }))).toEqual(['Alex Samson', 'Sam Smith', 'Samantha Jones']);
    expect(names(await list({ q: 'SMI' }))).toEqual(['Sam Smith']);
    expect(names(await list({ q: 'sam sm' }))).toEqual(['Sam Smith']);
    expect(names(await list({ q: 'jose' }))).toEqual(['José Álvarez']);
    expect(names(await list({ q: 'ÁLV' }))).toEqual(['José Álvarez']);
    expect(names(await list({ q: "o'b" }))).toEqual(["Bob O'Brien"]);
    expect(await list({ q: 'zzz' })).toEqual([]);
  });

  it('matches a prefix of the email address (not a part of it)', async () => {
    const suffix = tenant.workspaceId.slice(-6).toLowerCase();
    expect(names(await list({ q: `samj-${suffix}@` }))).toEqual(['Samantha Jones']);
    expect(names(await list({ q: 'SAM.SMITH' }))).toEqual(['Sam Smith']);
    expect(names(await list({ q: `bob-${suffix}@sam` }))).toEqual(["Bob O'Brien"]);
    expect(await list({ q: 'example.com' })).toEqual([]);
  });

  it('matches a prefix of the phone number: E.164, digits, national form with or without the 0', async () => {
    for (const q of [
      '+61491570123',
      '+61 491 570 12',
      '61491570123',
      '0491 570 123',
      '0491-570-12',
      '491570123',
    ]) {
      expect({ q, found: names(await list({ q })) }).toEqual({ q, found: ["Bob O'Brien"] });
    }
    expect(names(await list({ q: '049157010' }))).toEqual(['Alex Samson', 'José Álvarez', 'Sam Smith']);
    expect(names(await list({ q: '+6149157' })).length).toBe(4);
  });

  it('follows changes: a new name or email is found, the old one no longer; a deleted contact is gone', async () => {
    const own = await newTenant();
    const created = await createContact(own, {
      first_name: 'Terry',
      email: 'terry@example.com',
      phone: '+61491570111',
    });
    const find = async (q: string) => ids((await allPages(contactsPath(own), own.owner.token, { q })).items);
    expect(await find('terr')).toEqual([created.id]);
    const patched = await api('PATCH', contactPath(own, created.id), {
      token: own.owner.token,
      body: { first_name: 'Morgan', email: 'morgan@example.com', phone: '+61491570112' },
    });
    expect(patched.status).toBe(200);
    expect(await find('terr')).toEqual([]);
    expect(await find('0491570111')).toEqual([]);
    expect(await find('morg')).toEqual([created.id]);
    expect(await find('0491570112')).toEqual([created.id]);
    const [found] = (await allPages(contactsPath(own), own.owner.token, { q: 'morgan@' })).items;
    expect(found).toEqual(patched.body);
    await api('DELETE', contactPath(own, created.id), { token: own.owner.token });
    expect(await find('morg')).toEqual([]);
  });
});

describe('filters', () => {
  it('contactability, source and tag (ignoring case), alone and together, and with q', async () => {
    expect(names(await list({ contactability: 'do_not_contact' }))).toEqual(['José Álvarez']);
    expect(names(await list({ contactability: 'contactable' }))).toHaveLength(4);
    expect(names(await list({ contactability: 'unsubscribed' }))).toEqual([]);
    expect(names(await list({ source: 'csv' }))).toEqual(['Samantha Jones']);
    expect(names(await list({ source: 'manual' }))).toHaveLength(3);
    expect(names(await list({ source: 'call' }))).toEqual([]);
    expect(names(await list({ tag: 'vip' }))).toEqual(["Bob O'Brien", 'Sam Smith']);
    expect(names(await list({ tag: 'buyer', source: 'manual' }))).toEqual(["Bob O'Brien"]);
    expect(names(await list({ q: 'sam', tag: 'buyer' }))).toEqual(['Samantha Jones']);
    expect(names(await list({ q: '0491', contactability: 'do_not_contact', source: 'vcf' }))).toEqual([
      'José Álvarez',
    ]);
    expect(await list({ q: 'sam', source: 'vcf' })).toEqual([]);
  });

  it.each([
    ['limit 51', { limit: '51' }, 'query.limit:less_than_equal'],
    ['limit 0', { limit: '0' }, 'query.limit:greater_than_equal'],
    ['an unknown parameter', { name: 'x' }, 'query.name:extra_forbidden'],
    ['a bad contactability', { contactability: 'maybe' }, 'query.contactability:enum'],
    ['a bad source', { source: 'fax' }, 'query.source:enum'],
    ['an empty q', { q: '' }, 'query.q:string_too_short'],
    ['a cursor that is not ours', { cursor: 'not!a!cursor' }, 'query.cursor:value_error'],
  ])('%s is 422', async (_label, query, issue) => {
    const res = await api('GET', `${contactsPath(tenant)}?${new URLSearchParams(query).toString()}`, {
      token: tenant.owner.token,
    });
    expect(res.status).toBe(422);
    expect(issues(res)).toContain(issue);
  });
});

describe('pages', () => {
  let big: Tenant;
  let created: Json[];

  beforeAll(async () => {
    big = await newTenant();
    created = await inBatches(120, 10, (i) =>
      createContact(big, {
        first_name: 'Page',
        last_name: `Person ${String(i).padStart(3, '0')}`,
        phone: `+61491571${String(i).padStart(3, '0')}`,
        tags: i % 3 === 0 ? ['third'] : [],
        contactability: i % 5 === 0 ? 'unsubscribed' : 'contactable',
      }),
    );
  });

  it('50 a page by default, newest first, with next_cursor until the end', async () => {
    const { items, pages } = await allPages(contactsPath(big), big.owner.token);
    expect(pages.map((p) => p.body.items.length)).toEqual([50, 50, 20]);
    expect(pages.map((p) => p.body.next_cursor === null)).toEqual([false, false, true]);
    expect(new Set(ids(items)).size).toBe(120);
    expect(ids(items)).toEqual(ids(created).sort().reverse());
  });

  it('a smaller limit pages through the same list', async () => {
    const { items, pages } = await allPages(contactsPath(big), big.owner.token, { limit: '7' });
    expect(pages).toHaveLength(18);
    expect(ids(items)).toEqual(ids(created).sort().reverse());
  });

  it('q pages in token order, each contact once', async () => {
    const { items, pages } = await allPages(contactsPath(big), big.owner.token, { q: 'page', limit: '50' });
    expect(pages.map((p) => p.body.items.length)).toEqual([50, 50, 20]);
    expect(new Set(ids(items)).size).toBe(120);
    const lastNames = items.map((c: Json) => c.last_name as string);
    expect(lastNames).toEqual([...lastNames].sort());
  });

  it('filters page correctly: every match once, none missed, the list ends only when next_cursor is null', async () => {
    const expected = (match: (i: number) => boolean) =>
      ids(created.filter((_, i) => match(i)))
        .sort()
        .reverse();
    const third = await allPages(contactsPath(big), big.owner.token, { tag: 'third', limit: '10' });
    expect(ids(third.items)).toEqual(expected((i) => i % 3 === 0));
    const both = await allPages(contactsPath(big), big.owner.token, {
      tag: 'THIRD',
      contactability: 'unsubscribed',
      limit: '3',
    });
    expect(ids(both.items)).toEqual(expected((i) => i % 15 === 0));
    const searched = await allPages(contactsPath(big), big.owner.token, {
      q: '0491571',
      contactability: 'unsubscribed',
      limit: '5',
    });
    expect(ids(searched.items).sort()).toEqual(expected((i) => i % 5 === 0).sort());
  });

  it('a cursor of one list is refused by another (422), never read in the wrong list', async () => {
    const first = await api('GET', `${contactsPath(big)}?q=page&limit=5`, { token: big.owner.token });
    const cursor = first.body.next_cursor as string;
    const res = await api('GET', `${contactsPath(big)}?cursor=${encodeURIComponent(cursor)}`, {
      token: big.owner.token,
    });
    expect(res.status).toBe(422);
    const other = await api('GET', `${contactsPath(tenant)}?q=page&cursor=${encodeURIComponent(cursor)}`, {
      token: tenant.owner.token,
    });
    expect(other.status).toBe(422);
  });
});
