import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import { ContactEntity } from '../../../functions/contacts/entities.js';
import {
  allPages,
  contactPath,
  contactsPath,
  createContact,
  newTenant,
  uniqueMobile,
  type Tenant,
} from './fixtures.js';

/**
 * No silent data changes on import: a row whose phone number is invalid but whose email is valid
 * is imported without the number and the job says so in its per-row `warnings`; attribute headers
 * are matched case-insensitively and stored under one normalised key (as the API's attributes are);
 * a merge treats an empty value ("" included, as older records may hold) as empty and fills it; and
 * absent text is stored absent (null), never "".
 */

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
});

async function importCsv(t: Tenant, csv: string): Promise<Json> {
  const res = await api('POST', `${contactsPath(t)}/imports`, {
    token: t.owner.token,
    rawBody: csv,
    headers: { 'content-type': 'text/csv' },
  });
  expect(res.status).toBe(202);
  return waitFor(
    async () => {
      const job = await api('GET', `${contactsPath(t)}/imports/${res.body.id}`, { token: t.owner.token });
      return ['completed', 'failed'].includes(job.body.status) ? job.body : undefined;
    },
    { what: 'the import to end', timeoutMs: 60_000, intervalMs: 200 },
  );
}

const stored = async (t: Tenant, contactId: string) =>
  (await ContactEntity.get({ workspaceId: t.workspaceId, contactId }).go({ consistent: true })).data!;

test('a row imported without its invalid phone number is reported in the job’s warnings', async () => {
  const good = uniqueMobile();
  const job = await importCsv(
    tenant,
    ['name,phone,email', `Good Row,${good},`, 'Bad Phone,12,fine@example.com', 'Bad Both,12,nope'].join('\n'),
  );
  expect(job).toMatchObject({ status: 'completed', counts: { total: 3, created: 2, rejected: 1 } });
  expect(job.errors.map((e: Json) => e.row)).toEqual([3]);
  expect(job.warnings).toEqual([
    { row: 2, reason: 'phone "12" is not a valid phone number: imported without a phone number' },
  ]);
  const contacts = (await allPages(contactsPath(tenant), tenant.owner.token)).items;
  expect(contacts.find((c: Json) => c.email === 'fine@example.com')).toMatchObject({ phone: null });
  // The list of imports stays a summary: warnings are the job's own route's.
  const list = await api('GET', `${contactsPath(tenant)}/imports`, { token: tenant.owner.token });
  expect(list.body.items[0]).not.toHaveProperty('warnings');
});

test('attribute headers are one attribute whatever their case; a merge fills "" and absent text stays absent', async () => {
  const [sam, alex] = [uniqueMobile(), uniqueMobile()];
  // Through the API: attribute keys normalised, a blank attribute and a blank last name not stored.
  const created = await createContact(tenant, {
    first_name: 'Sam',
    last_name: '',
    phone: sam,
    attributes: { 'Home Suburb': 'Bondi', Blank: '' },
  });
  expect(created).toMatchObject({ last_name: '', attributes: { home_suburb: 'Bondi' } });
  const record = await stored(tenant, created.id);
  expect(record.lastName).toBeUndefined();
  expect(record.customAttributes).toEqual({ home_suburb: 'Bondi' });
  // A record written before the rule, holding "" (a last name, an attribute): merges see it as empty.
  const legacy = await createContact(tenant, { first_name: 'Alex', phone: alex });
  await ContactEntity.patch({ workspaceId: tenant.workspaceId, contactId: legacy.id })
    .set({ lastName: '', customAttributes: { suburb: '' } })
    .go();

  const job = await importCsv(
    tenant,
    [
      'first_name,last_name,phone,Suburb,suburb,HOME-SUBURB',
      `Sam,Smith,${sam},Carlton,,Manly`,
      `Alex,Jones,${alex},,Fitzroy,`,
    ].join('\n'),
  );
  expect(job).toMatchObject({ status: 'completed', counts: { total: 2, merged: 2 }, warnings: [] });
  const samNow = (await api('GET', contactPath(tenant, created.id), { token: tenant.owner.token })).body;
  // The last name was empty: filled; the home suburb was set: kept; `Suburb` is the attribute `suburb`.
  expect(samNow).toMatchObject({
    first_name: 'Sam',
    last_name: 'Smith',
    attributes: { home_suburb: 'Bondi', suburb: 'Carlton' },
  });
  const alexNow = (await api('GET', contactPath(tenant, legacy.id), { token: tenant.owner.token })).body;
  expect(alexNow).toMatchObject({ last_name: 'Jones', attributes: { suburb: 'Fitzroy' } });
  expect((await stored(tenant, legacy.id)).customAttributes).toEqual({ suburb: 'Fitzroy' });

  // A PATCH spelling the key differently changes the one attribute; "" removes it, as null does.
  const patched = await api('PATCH', contactPath(tenant, created.id), {
    token: tenant.owner.token,
    body: { attributes: { 'HOME SUBURB': 'Coogee', suburb: '' } },
  });
  expect(patched.status).toBe(200);
  expect(patched.body.attributes).toEqual({ home_suburb: 'Coogee' });
  expect((await stored(tenant, created.id)).customAttributes).toEqual({ home_suburb: 'Coogee' });
});
