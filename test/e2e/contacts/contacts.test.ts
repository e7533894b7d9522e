import { ContactEmailEntity, ContactPhoneEntity } from '../../../functions/contacts/entities.js';
import { api } from '../../helpers/http.js';
import {
  addMember,
  contactPath,
  contactsPath,
  createContact,
  issues,
  newTenant,
  uniqueMobile,
  ws,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * Contacts: create, read, update, delete; phone numbers read in the workspace's country; email-only
 * contacts; one of phone and email required; duplicates by phone or email are 409 with the id of the
 * contact that has it, also when several creates race.
 */

let tenant: Tenant;
let member: User;

beforeAll(async () => {
  tenant = await newTenant();
  member = await addMember(tenant, 'member');
});

const CONTACT_ID = /^ct_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('create, read, update, delete', () => {
  it('creates a contact with every field and reads it back', async () => {
    const phone = uniqueMobile();
    const res = await api('POST', contactsPath(tenant), {
      token: member.token,
      body: {
        first_name: '  Jordan ',
        last_name: 'Lee',
        phone: phone.replace('+61491', '+61 491 ').replace(/(\d{3})(\d{3})$/, '$1 $2'),
        email: ' Jordan.Lee@Example.COM ',
        contactability: 'do_not_contact',
        tags: ['VIP', 'buyer', 'vip'],
        attributes: { suburb: 'Bondi', budget: '1.2m' },
        timezone: 'Australia/Sydney',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(CONTACT_ID),
      first_name: 'Jordan',
      last_name: 'Lee',
      phone,
      email: 'jordan.lee@example.com',
      contactability: 'do_not_contact',
      source: 'manual',
      source_label: 'Manual',
      tags: ['VIP', 'buyer'],
      attributes: { suburb: 'Bondi', budget: '1.2m' },
      timezone: 'Australia/Sydney',
      last_contacted_at: null,
      created_at: expect.any(String),
      updated_at: res.body.created_at,
    });
    const read = await api('GET', contactPath(tenant, res.body.id), { token: member.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('defaults: contactable, manual, no tags, attributes or timezone, empty names', async () => {
    const created = await createContact(tenant, { email: 'defaults@example.com' });
    expect(created).toMatchObject({
      first_name: '',
      last_name: '',
      phone: null,
      email: 'defaults@example.com',
      contactability: 'contactable',
      source: 'manual',
      source_label: 'Manual',
      tags: [],
      attributes: {},
      timezone: null,
    });
  });

  it.each([
    ['csv', 'CSV'],
    ['sms_upload', 'SMS Upload'],
    ['device', 'Phone / Device'],
    ['vcf', 'VCF Upload'],
  ])('source %s is labelled %s', async (source, label) => {
    const created = await createContact(tenant, { phone: uniqueMobile(), source });
    expect(created).toMatchObject({ source, source_label: label });
  });

  it("an integration's contact is labelled with the integration's name", async () => {
    const created = await createContact(tenant, {
      phone: uniqueMobile(),
      source: 'integration',
      source_label: 'HubSpot',
    });
    expect(created).toMatchObject({ source: 'integration', source_label: 'HubSpot' });
  });

  it('PATCH changes what is sent; null removes phone, email or timezone; attributes merge, tags are replaced', async () => {
    const created = await createContact(tenant, {
      first_name: 'Pat',
      phone: uniqueMobile(),
      email: `pat-${Date.now()}@example.com`,
      tags: ['a', 'b'],
      attributes: { keep: '1', drop: '2' },
      timezone: 'Australia/Perth',
    });
    const patched = await api('PATCH', contactPath(tenant, created.id), {
      token: member.token,
      body: {
        last_name: 'Doe',
        email: null,
        timezone: null,
        contactability: 'unsubscribed',
        tags: ['c'],
        attributes: { drop: null, added: 'x' },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...created,
      last_name: 'Doe',
      email: null,
      timezone: null,
      contactability: 'unsubscribed',
      tags: ['c'],
      attributes: { keep: '1', added: 'x' },
      updated_at: expect.any(String),
    });
    expect(patched.body.updated_at >= created.updated_at).toBe(true);
    // The email is free again: another contact may take it.
    const other = await api('POST', contactsPath(tenant), {
      token: member.token,
      body: { email: created.email },
    });
    expect(other.status).toBe(201);
    expect((await api('GET', contactPath(tenant, created.id), { token: member.token })).body).toEqual(
      patched.body,
    );
  });

  it('PATCH moves the phone key: the old number is free, the new one taken', async () => {
    const oldPhone = uniqueMobile();
    const newPhone = uniqueMobile();
    const created = await createContact(tenant, { phone: oldPhone });
    const patched = await api('PATCH', contactPath(tenant, created.id), {
      token: member.token,
      body: { phone: newPhone },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.phone).toBe(newPhone);
    const { data: oldKey } = await ContactPhoneEntity.get({
      workspaceId: tenant.workspaceId,
      phone: oldPhone,
    }).go();
    const { data: newKey } = await ContactPhoneEntity.get({
      workspaceId: tenant.workspaceId,
      phone: newPhone,
    }).go();
    expect(oldKey).toBeNull();
    expect(newKey?.contactId).toBe(created.id);
    const again = await api('POST', contactsPath(tenant), { token: member.token, body: { phone: oldPhone } });
    expect(again.status).toBe(201);
    const clash = await api('POST', contactsPath(tenant), { token: member.token, body: { phone: newPhone } });
    expect(clash.status).toBe(409);
    expect(clash.body).toEqual({ error: 'Contact already exists', contact_id: created.id });
  });

  it('PATCH to a phone or email another contact has is 409 with its id, and changes nothing', async () => {
    const a = await createContact(tenant, { phone: uniqueMobile(), email: `a-${Date.now()}@example.com` });
    const b = await createContact(tenant, { phone: uniqueMobile() });
    for (const body of [{ phone: a.phone }, { email: a.email }, { phone: a.phone, first_name: 'Changed' }]) {
      const res = await api('PATCH', contactPath(tenant, b.id), { token: member.token, body });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        error: 'Another contact has this phone number or email address',
        contact_id: a.id,
      });
    }
    expect((await api('GET', contactPath(tenant, b.id), { token: member.token })).body).toEqual(b);
  });

  it('PATCH that would leave neither phone nor email is 422 and changes nothing', async () => {
    const created = await createContact(tenant, { phone: uniqueMobile() });
    const res = await api('PATCH', contactPath(tenant, created.id), {
      token: member.token,
      body: { phone: null, first_name: 'X' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toContain('phone number or an email address');
    expect((await api('GET', contactPath(tenant, created.id), { token: member.token })).body).toEqual(
      created,
    );
  });

  it('DELETE removes the contact, its phone and email keys: the number and address can be used again', async () => {
    const phone = uniqueMobile();
    const email = `gone-${Date.now()}@example.com`;
    const created = await createContact(tenant, { phone, email });
    const deleted = await api('DELETE', contactPath(tenant, created.id), { token: member.token });
    expect(deleted.status).toBe(204);
    expect((await api('GET', contactPath(tenant, created.id), { token: member.token })).status).toBe(404);
    expect((await api('DELETE', contactPath(tenant, created.id), { token: member.token })).status).toBe(404);
    expect((await ContactPhoneEntity.get({ workspaceId: tenant.workspaceId, phone }).go()).data).toBeNull();
    expect((await ContactEmailEntity.get({ workspaceId: tenant.workspaceId, email }).go()).data).toBeNull();
    const again = await createContact(tenant, { phone, email });
    expect(again.id).not.toBe(created.id);
  });

  it('unknown ids and ids of the wrong shape are 404', async () => {
    for (const id of ['ct_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'nope', 'ag_01JZZZZZZZZZZZZZZZZZZZZZZZ']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await api(method, contactPath(tenant, id), {
          token: member.token,
          ...(method === 'PATCH' ? { body: { first_name: 'x' } } : {}),
        });
        expect({ method, id, status: res.status, body: res.body }).toEqual({
          method,
          id,
          status: 404,
          body: { error: 'Contact not found' },
        });
      }
    }
  });
});

describe('phone numbers in the workspace’s country', () => {
  it('reads national numbers in AU by default and in the country the workspace sets', async () => {
    const own = await newTenant();
    const workspace = await api('GET', ws(own), { token: own.owner.token });
    expect(workspace.body.country).toBe('AU');
    const au = await createContact(own, { phone: '0491 570 156' });
    expect(au.phone).toBe('+61491570156');
    const spaced = await createContact(own, { phone: '+61 491-570-158' });
    expect(spaced.phone).toBe('+61491570158');

    const changed = await api('PATCH', ws(own), { token: own.owner.token, body: { country: 'nz' } });
    expect(changed.status).toBe(200);
    expect(changed.body.country).toBe('NZ');
    const nz = await createContact(own, { phone: '021 123 4567' });
    expect(nz.phone).toBe('+64211234567');
    // An international number is read as such whatever the country.
    const auFromNz = await createContact(own, { phone: '+61 491 570 159' });
    expect(auFromNz.phone).toBe('+61491570159');
    // A PATCH reads the number in the workspace's country too.
    const patched = await api('PATCH', contactPath(own, nz.id), {
      token: own.owner.token,
      body: { phone: '021 765 4321' },
    });
    expect(patched.body.phone).toBe('+64217654321');
  });

  it('a workspace country that is not an ISO 3166 alpha-2 code with a numbering plan is 422', async () => {
    const own = await newTenant();
    for (const country of ['ZZ', 'AUS', '', 'A1']) {
      const res = await api('PATCH', ws(own), { token: own.owner.token, body: { country } });
      expect({ country, status: res.status }).toEqual({ country, status: 422 });
    }
  });

  it.each([['12345'], ['0491 570'], ['+61 1'], ['not a number'], ['+999 123 456 789'], ['04915701561']])(
    'an invalid number (%s) is 422 on body.phone and makes nothing',
    async (phone) => {
      const own = await newTenant();
      const res = await api('POST', contactsPath(own), { token: own.owner.token, body: { phone } });
      expect(res.status).toBe(422);
      expect(issues(res)).toEqual(['body.phone:value_error']);
      const list = await api('GET', contactsPath(own), { token: own.owner.token });
      expect(list.body.items).toEqual([]);
    },
  );
});

describe('email-only contacts, and contacts with neither', () => {
  it('a contact may have an email only', async () => {
    const created = await createContact(tenant, {
      first_name: 'Mail',
      email: `only-${Date.now()}@Example.com`,
    });
    expect(created.phone).toBeNull();
    expect(created.email).toMatch(/^only-\d+@example\.com$/);
  });

  it.each([
    ['neither', {}],
    ['both null', { phone: null, email: null, first_name: 'Nobody' }],
    ['an empty phone', { phone: '' }],
  ])('%s is 422 and makes nothing', async (_label, body) => {
    const own = await newTenant();
    const res = await api('POST', contactsPath(own), { token: own.owner.token, body });
    expect(res.status).toBe(422);
    expect((await api('GET', contactsPath(own), { token: own.owner.token })).body.items).toEqual([]);
  });

  it.each([
    ['a bad email', { email: 'not-an-email' }, 'body.email:value_error'],
    ['an unknown field', { phone: '+61491570160', owner: 'me' }, 'body.owner:extra_forbidden'],
    ['a bad contactability', { phone: '+61491570160', contactability: 'maybe' }, 'body.contactability:enum'],
    ['source call (the pipeline’s own)', { phone: '+61491570160', source: 'call' }, 'body.source:enum'],
    [
      'an integration without its name',
      { phone: '+61491570160', source: 'integration' },
      'body.source_label:value_error',
    ],
    [
      'a label for a non-integration',
      { phone: '+61491570160', source_label: 'X' },
      'body.source_label:value_error',
    ],
    ['a bad timezone', { phone: '+61491570160', timezone: 'Mars/Base' }, 'body.timezone:value_error'],
    [
      '51 tags',
      { phone: '+61491570160', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) },
      'body.tags:too_long',
    ],
    ['an empty tag', { phone: '+61491570160', tags: [' '] }, 'body.tags.0:string_too_short'],
    [
      'a non-string attribute',
      { phone: '+61491570160', attributes: { a: 1 } },
      'body.attributes.a:string_type',
    ],
    [
      'a 101-character name',
      { phone: '+61491570160', first_name: 'x'.repeat(101) },
      'body.first_name:string_too_long',
    ],
  ])('%s is 422 and makes nothing', async (_label, body, issue) => {
    const own = await newTenant();
    const res = await api('POST', contactsPath(own), { token: own.owner.token, body });
    expect(res.status).toBe(422);
    expect(issues(res)).toContain(issue);
    expect((await api('GET', contactsPath(own), { token: own.owner.token })).body.items).toEqual([]);
  });

  it('a bad PATCH is 422 and changes nothing', async () => {
    const created = await createContact(tenant, { phone: uniqueMobile() });
    for (const body of [
      { phone: '12345' },
      { email: 'nope' },
      { source: 'csv' },
      { tags: 'vip' },
      { attributes: { a: 5 } },
      { contactability: 'never' },
    ]) {
      const res = await api('PATCH', contactPath(tenant, created.id), { token: member.token, body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    expect((await api('GET', contactPath(tenant, created.id), { token: member.token })).body).toEqual(
      created,
    );
  });
});

describe('duplicates', () => {
  it('a second contact with the same phone (in any format) or email is 409 with the first one’s id', async () => {
    const phone = uniqueMobile();
    const email = `dup-${Date.now()}@example.com`;
    const first = await createContact(tenant, { phone, first_name: 'First' });
    const byEmail = await createContact(tenant, { email, first_name: 'Second' });
    const national = `0${phone.slice(3)}`;
    for (const body of [{ phone }, { phone: national }, { phone: national, email: 'new@example.com' }]) {
      const res = await api('POST', contactsPath(tenant), { token: member.token, body });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'Contact already exists', contact_id: first.id });
    }
    const res = await api('POST', contactsPath(tenant), {
      token: member.token,
      body: { email: email.toUpperCase(), phone: uniqueMobile() },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Contact already exists', contact_id: byEmail.id });
    // Nothing of the refused creates was written: their new phone number is still free.
    expect(
      (await api('POST', contactsPath(tenant), { token: member.token, body: { phone: uniqueMobile() } }))
        .status,
    ).toBe(201);
  });

  it('concurrent creates of one phone number make exactly one contact; the others get 409 with its id', async () => {
    const own = await newTenant();
    const phone = uniqueMobile();
    const emails = Array.from({ length: 8 }, (_, i) => `racer-${i}-${Date.now()}@example.com`);
    const results = await Promise.all(
      emails.map((email, i) =>
        api('POST', contactsPath(own), {
          token: own.owner.token,
          body: { phone, first_name: `Racer ${i}`, email },
        }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(7);
    for (const r of refused)
      expect(r.body).toEqual({ error: 'Contact already exists', contact_id: created[0].body.id });
    const list = await api('GET', contactsPath(own), { token: own.owner.token });
    expect(list.body.items.map((c: { id: string }) => c.id)).toEqual([created[0].body.id]);
    // The losers' email addresses were not claimed; the winner's was.
    const claimed = await Promise.all(
      emails.map(
        async (email) => (await ContactEmailEntity.get({ workspaceId: own.workspaceId, email }).go()).data,
      ),
    );
    expect(claimed.filter((key) => key !== null).map((key) => key?.contactId)).toEqual([created[0].body.id]);
  });
});
