import { api } from '../../helpers/http.js';
import { contactsPath, newTenant, notesPath, uniqueMobile, type Tenant } from './fixtures.js';

/**
 * Text that should be refused, over HTTP (functions/platform/validation.ts, the HTTP kernel): control
 * characters and bidirectional controls in names and labels are 422 on the field; a body of another
 * media type is 415; an internationalised e-mail address is taken where the provider can send to it
 * (its domain kept in Punycode) and refused with the reason where it cannot. Nothing is written.
 */

let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant();
});

const post = (body: unknown) => api('POST', contactsPath(tenant), { token: tenant.owner.token, body });
const contactCount = async () =>
  (await api('GET', `${contactsPath(tenant)}?limit=50`, { token: tenant.owner.token })).body.items.length;

it('NUL, a newline or a bidi override in a name, tag or attribute key: 422 on that field, nothing written', async () => {
  const before = await contactCount();
  const cases: [Record<string, unknown>, (string | number)[], string][] = [
    [{ first_name: 'Zo\u0000e' }, ['body', 'first_name'], 'U+0000'],
    [{ last_name: 'Ng\nDROP' }, ['body', 'last_name'], 'U+000A'],
    [{ tags: ['vip', 'gpj.exe\u202etxt'] }, ['body', 'tags', 1], 'U+202E'],
    [{ attributes: { 'suburb\u2066': 'Perth' } }, ['body', 'attributes', 'suburb\u2066'], 'U+2066'],
  ];
  for (const [fields, loc, found] of cases) {
    const res = await post({ phone: uniqueMobile(), ...fields });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc, msg: expect.stringContaining(found) }),
    ]);
  }
  expect(await contactCount()).toBe(before);
});

it('free text keeps its line breaks but not NUL (a note)', async () => {
  const contact = await post({ first_name: 'Zoë 🏡', phone: uniqueMobile() });
  expect(contact.status).toBe(201);
  const path = notesPath(tenant, contact.body.id);
  const ok = await api('POST', path, {
    token: tenant.owner.token,
    body: { text: 'Called.\nCall back Tue.' },
  });
  expect(ok.status).toBe(201);
  const bad = await api('POST', path, { token: tenant.owner.token, body: { text: 'Called.\u0000' } });
  expect(bad.status).toBe(422);
  expect(bad.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'text'] });
});

it('an organisation name with a bidi isolate is 422 too (the same rule in every domain)', async () => {
  const res = await api('POST', '/api/v1/organisations', {
    token: tenant.owner.token,
    body: { name: 'Acme \u2067Realty' },
  });
  expect(res.status).toBe(422);
  expect(res.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'name'] });
});

it('a body sent as text/plain or a form is 415 and writes nothing', async () => {
  const before = await contactCount();
  for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
    const res = await api('POST', contactsPath(tenant), {
      token: tenant.owner.token,
      rawBody: JSON.stringify({ first_name: 'Plain', phone: uniqueMobile() }),
      headers: { 'content-type': type },
    });
    expect(res.status).toBe(415);
    expect(res.body.error).toBe(`Unsupported media type ${type}: this route takes application/json`);
  }
  expect(await contactCount()).toBe(before);
});

it('an internationalised domain is taken (kept as Punycode); a non-ASCII local part is 422 with the reason', async () => {
  const idn = await post({ first_name: 'Zoe', email: 'Zoe@Exämple.com' });
  expect(idn.status).toBe(201);
  expect(idn.body.email).toBe('zoe@xn--exmple-cua.com');
  // The same mailbox written either way is the same contact.
  const again = await post({ email: 'zoe@xn--exmple-cua.com' });
  expect(again.status).toBe(409);
  expect(again.body.contact_id).toBe(idn.body.id);

  const local = await post({ first_name: 'Zoë', email: 'zoë@exämple.com' });
  expect(local.status).toBe(422);
  expect(local.body.detail).toEqual([
    expect.objectContaining({
      type: 'value_error',
      loc: ['body', 'email'],
      msg: 'Value error, the part before @ must be ASCII: our e-mail provider cannot send to internationalised (SMTPUTF8) addresses',
    }),
  ]);
});
