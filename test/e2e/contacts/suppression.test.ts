import { isSuppressed, suppressedAmong } from '../../../functions/contacts/suppression.js';
import { api } from '../../helpers/http.js';
import { addMember, allPages, apiKey, issues, newTenant, suppressionPath, type Tenant } from './fixtures.js';

/**
 * The organisation's suppression (do-not-call) list: PUT and DELETE by E.164 number in the path,
 * URL-encoded (`%2B61…`) or with a literal `+`; every member reads it, owners and admins change it;
 * API keys are refused; another organisation's list is 404. isSuppressed / suppressedAmong are what
 * campaigns and SMS will ask.
 */

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
});

const entry = (phone: string, encoded = true) =>
  `${suppressionPath(tenant)}/${encoded ? encodeURIComponent(phone) : phone}`;

describe('the suppression list', () => {
  it('PUT with %2B adds a number (200 {phone, reason, created_at}); the list shows it; DELETE with a literal + takes it off', async () => {
    const added = await api('PUT', entry('+61491570131'), {
      token: tenant.owner.token,
      body: { reason: 'Asked not to be called' },
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({
      phone: '+61491570131',
      reason: 'Asked not to be called',
      created_at: expect.any(String),
    });
    expect(await isSuppressed(tenant.organisationId, '+61491570131')).toBe(true);
    expect(await isSuppressed(tenant.organisationId, '+61 491 570 131')).toBe(true);

    const listed = await api('GET', suppressionPath(tenant), { token: tenant.owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [added.body], next_cursor: null });

    const removed = await api('DELETE', entry('+61491570131', false), { token: tenant.owner.token });
    expect(removed.status).toBe(204);
    expect(await isSuppressed(tenant.organisationId, '+61491570131')).toBe(false);
    expect((await api('GET', suppressionPath(tenant), { token: tenant.owner.token })).body.items).toEqual([]);
    const again = await api('DELETE', entry('+61491570131'), { token: tenant.owner.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'Suppression entry not found' });
  });

  it('PUT with a literal + and no body; PUT again keeps created_at and sets the reason (null clears it)', async () => {
    const first = await api('PUT', entry('+61491570132', false), { token: tenant.owner.token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ phone: '+61491570132', reason: null, created_at: expect.any(String) });
    const second = await api('PUT', entry('+61491570132'), {
      token: tenant.owner.token,
      body: { reason: 'complaint' },
    });
    expect(second.body).toEqual({ ...first.body, reason: 'complaint' });
    const third = await api('PUT', entry('+61491570132'), {
      token: tenant.owner.token,
      body: { reason: null },
    });
    expect(third.body).toEqual(first.body);
    expect((await api('GET', suppressionPath(tenant), { token: tenant.owner.token })).body.items).toEqual([
      first.body,
    ]);
  });

  it('isSuppressed and suppressedAmong (the batch for campaigns and SMS)', async () => {
    const own = await newTenant();
    const numbers = Array.from({ length: 130 }, (_, i) => `+61491572${String(i).padStart(3, '0')}`);
    for (const phone of numbers.filter((_, i) => i % 10 === 0)) {
      expect(
        (await api('PUT', `${suppressionPath(own)}/${encodeURIComponent(phone)}`, { token: own.owner.token }))
          .status,
      ).toBe(200);
    }
    const found = await suppressedAmong(own.organisationId, [...numbers, 'not a number', '+61491572000']);
    expect([...found].sort()).toEqual(numbers.filter((_, i) => i % 10 === 0));
    expect(await isSuppressed(own.organisationId, numbers[10])).toBe(true);
    expect(await isSuppressed(own.organisationId, numbers[11])).toBe(false);
    expect(await isSuppressed(own.organisationId, 'garbage')).toBe(false);
    // Organisation-wide, and only that organisation's.
    expect(await isSuppressed(tenant.organisationId, numbers[10])).toBe(false);
    const { items, pages } = await allPages(suppressionPath(own), own.owner.token, { limit: '5' });
    expect(pages.map((p) => p.body.items.length)).toEqual([5, 5, 3]);
    expect(items.map((e) => e.phone)).toEqual(numbers.filter((_, i) => i % 10 === 0));
  });

  it.each([
    ['a national number', '0491570133'],
    ['digits without +', '61491570133'],
    ['text', 'call-me-maybe'],
    ['an impossible number', '+6112'],
  ])('%s in the path is 422 on path.phone and adds nothing', async (_label, phone) => {
    const res = await api('PUT', `${suppressionPath(tenant)}/${encodeURIComponent(phone)}`, {
      token: tenant.owner.token,
      body: { reason: 'x' },
    });
    expect(res.status).toBe(422);
    expect(issues(res)).toEqual(['path.phone:value_error']);
    const deleted = await api('DELETE', `${suppressionPath(tenant)}/${encodeURIComponent(phone)}`, {
      token: tenant.owner.token,
    });
    expect(deleted.status).toBe(422);
  });

  it('a bad body is 422 and adds nothing', async () => {
    for (const body of [{ reason: 'x'.repeat(201) }, { reason: 5 }, { why: 'x' }]) {
      const res = await api('PUT', entry('+61491570134'), { token: tenant.owner.token, body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    expect(await isSuppressed(tenant.organisationId, '+61491570134')).toBe(false);
  });

  it('every member reads it; organisation admins change it; regular members (whatever their workspace role) are 403', async () => {
    await api('PUT', entry('+61491570135'), { token: tenant.owner.token });
    const admin = await addMember(tenant, 'viewer', 'admin');
    const wsAdmin = await addMember(tenant, 'admin');
    const member = await addMember(tenant, 'member');
    const viewer = await addMember(tenant, 'viewer');
    for (const user of [admin, wsAdmin, member, viewer]) {
      expect((await api('GET', suppressionPath(tenant), { token: user.token })).status).toBe(200);
    }
    const put = await api('PUT', entry('+61491570136'), { token: admin.token, body: { reason: 'by admin' } });
    expect(put.status).toBe(200);
    expect((await api('DELETE', entry('+61491570136'), { token: admin.token })).status).toBe(204);
    for (const user of [wsAdmin, member, viewer]) {
      const refused = await api('PUT', entry('+61491570137'), { token: user.token });
      expect(refused.status).toBe(403);
      expect((await api('DELETE', entry('+61491570135'), { token: user.token })).status).toBe(403);
    }
    expect(await isSuppressed(tenant.organisationId, '+61491570137')).toBe(false);
    expect(await isSuppressed(tenant.organisationId, '+61491570135')).toBe(true);
  });

  it('API keys are refused (403), whatever their scopes', async () => {
    const key = (await apiKey(tenant, ['contacts:read', 'contacts:write'])).key;
    expect((await api('GET', suppressionPath(tenant), { token: key })).status).toBe(403);
    expect((await api('PUT', entry('+61491570138'), { token: key })).status).toBe(403);
    expect((await api('DELETE', entry('+61491570135'), { token: key })).status).toBe(403);
  });

  it("another organisation's list is 404, and its numbers untouched", async () => {
    const other = await newTenant();
    await api('PUT', `${suppressionPath(other)}/${encodeURIComponent('+61491570139')}`, {
      token: other.owner.token,
    });
    const path = `${suppressionPath(other)}/${encodeURIComponent('+61491570139')}`;
    for (const [method, target] of [
      ['GET', suppressionPath(other)],
      ['PUT', `${suppressionPath(other)}/${encodeURIComponent('+61491570140')}`],
      ['DELETE', path],
    ] as const) {
      const res = await api(method, target, { token: tenant.owner.token });
      expect({ method, status: res.status, body: res.body }).toEqual({
        method,
        status: 404,
        body: { error: 'Organisation not found' },
      });
    }
    expect(await isSuppressed(other.organisationId, '+61491570139')).toBe(true);
    expect(await isSuppressed(other.organisationId, '+61491570140')).toBe(false);
    const unknown = await api(
      'GET',
      '/api/v1/organisations/org_01JZZZZZZZZZZZZZZZZZZZZZZZ/suppression-list',
      {
        token: tenant.owner.token,
      },
    );
    expect(unknown.status).toBe(404);
  });
});
