import { api } from '../../helpers/http.js';
import { addMember, apiKey, newTenant, ws, type Tenant } from '../post-call/fixtures.js';

/**
 * Webhook endpoints (docs/api.md "Workspace webhook endpoints"): create, list, change and delete,
 * bad input refused with nothing changed, tenancy (404 across workspaces) and roles (viewer reads,
 * member writes), API keys by scope (webhooks:read, webhooks:write).
 */

const RECEIVER = 'http://127.0.0.1:9/hooks/events';
const endpoints = (tenant: Tenant) => `${ws(tenant)}/webhook-endpoints`;

async function list(tenant: Tenant, token = tenant.owner.token) {
  const res = await api('GET', endpoints(tenant), { token });
  expect(res.status).toBe(200);
  return res.body.items as { id: string; url: string; event_types: string[]; enabled: boolean }[];
}

async function create(tenant: Tenant, body: Record<string, unknown>) {
  const res = await api('POST', endpoints(tenant), { token: tenant.owner.token, body });
  expect(res.status).toBe(201);
  return res.body;
}

describe('webhook endpoints', () => {
  it('create, list, change and delete', async () => {
    const tenant = await newTenant();
    const created = await create(tenant, { url: RECEIVER, event_types: ['call.ended', 'contact.created'] });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^whe_[0-9A-HJKMNP-TV-Z]{26}$/),
      url: RECEIVER,
      event_types: ['call.ended', 'contact.created'],
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // Repeated types are kept once; enabled may be given.
    const second = await create(tenant, {
      url: `${RECEIVER}/2`,
      event_types: ['sms.received', 'sms.received'],
      enabled: false,
    });
    expect(second).toMatchObject({ event_types: ['sms.received'], enabled: false });
    expect(await list(tenant)).toEqual([created, second]);

    const patched = await api('PATCH', `${endpoints(tenant)}/${created.id}`, {
      token: tenant.owner.token,
      body: { event_types: ['listing.sold'], enabled: false },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: created.id,
      url: RECEIVER,
      event_types: ['listing.sold'],
      enabled: false,
    });
    const moved = await api('PATCH', `${endpoints(tenant)}/${created.id}`, {
      token: tenant.owner.token,
      body: { url: `${RECEIVER}/moved`, enabled: true },
    });
    expect(moved.body).toMatchObject({
      url: `${RECEIVER}/moved`,
      event_types: ['listing.sold'],
      enabled: true,
    });

    const deleted = await api('DELETE', `${endpoints(tenant)}/${created.id}`, { token: tenant.owner.token });
    expect(deleted.status).toBe(204);
    expect((await list(tenant)).map((e) => e.id)).toEqual([second.id]);
    const again = await api('DELETE', `${endpoints(tenant)}/${created.id}`, { token: tenant.owner.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'Webhook endpoint not found' });
  });

  it('bad input is a 4xx and changes nothing', async () => {
    const tenant = await newTenant();
    const kept = await create(tenant, { url: RECEIVER, event_types: ['call.ended'] });
    const bad: [Record<string, unknown>, number, string | RegExp][] = [
      [{ url: 'not a url', event_types: ['call.ended'] }, 422, 'url must be a URL'],
      [{ url: 'ftp://example.com/x', event_types: ['call.ended'] }, 422, 'url must be an http(s) URL'],
      [{ url: 'http://10.1.2.3/hook', event_types: ['call.ended'] }, 422, /private/],
      [{ url: 'http://169.254.169.254/latest', event_types: ['call.ended'] }, 422, /link-local/],
      [{ url: 'http://user:pw@127.0.0.1:9/x', event_types: ['call.ended'] }, 422, /credentials/],
      [{ url: `${RECEIVER}/x`, event_types: ['call.started'] }, 422, /Input should be/],
      [{ url: `${RECEIVER}/x`, event_types: [] }, 422, /at least 1/],
      [{ url: `${RECEIVER}/x` }, 422, 'Field required'],
      [{ url: `${RECEIVER}/x`, event_types: ['call.ended'], secret: 'mine' }, 422, /Extra inputs/],
      [
        { url: RECEIVER, event_types: ['sms.received'] },
        409,
        'The workspace has a webhook endpoint with this URL',
      ],
    ];
    for (const [body, status, message] of bad) {
      const res = await api('POST', endpoints(tenant), { token: tenant.owner.token, body });
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(JSON.stringify(res.body)).toMatch(message);
    }
    const patches: Record<string, unknown>[] = [
      { url: 'http://192.168.1.1/x' },
      { event_types: [] },
      { event_types: ['nope'] },
      { enabled: 'yes' },
    ];
    for (const body of patches) {
      const res = await api('PATCH', `${endpoints(tenant)}/${kept.id}`, { token: tenant.owner.token, body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    expect(await list(tenant)).toEqual([kept]);
  });

  it('another workspace sees 404; a viewer reads and may not write; API keys need their scope', async () => {
    const tenant = await newTenant();
    const other = await newTenant();
    const endpoint = await create(tenant, { url: RECEIVER, event_types: ['call.ended'] });
    const mine = `${endpoints(tenant)}/${endpoint.id}`;

    // Another tenant's owner: 404 on the workspace, and on the endpoint through their own workspace.
    for (const [method, path] of [
      ['GET', endpoints(tenant)],
      ['POST', endpoints(tenant)],
      ['PATCH', mine],
      ['DELETE', mine],
    ] as const) {
      const res = await api(method, path, {
        token: other.owner.token,
        body:
          method === 'POST' || method === 'PATCH'
            ? { url: RECEIVER, event_types: ['call.ended'] }
            : undefined,
      });
      expect({ method, status: res.status }).toEqual({ method, status: 404 });
    }
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await api(method, `${endpoints(other)}/${endpoint.id}`, {
        token: other.owner.token,
        body: method === 'PATCH' ? { enabled: false } : undefined,
      });
      expect({ method, status: res.status }).toEqual({ method, status: 404 });
    }

    const viewer = await addMember(tenant, 'viewer');
    expect((await list(tenant, viewer.token)).map((e) => e.id)).toEqual([endpoint.id]);
    for (const [method, path, body] of [
      ['POST', endpoints(tenant), { url: `${RECEIVER}/v`, event_types: ['call.ended'] }],
      ['PATCH', mine, { enabled: false }],
      ['DELETE', mine, undefined],
    ] as const) {
      const res = await api(method, path, { token: viewer.token, body });
      expect({ method, status: res.status, body: res.body }).toEqual({
        method,
        status: 403,
        body: { error: 'Viewers have read-only access' },
      });
    }
    const member = await addMember(tenant, 'member');
    const byMember = await api('PATCH', mine, { token: member.token, body: { enabled: false } });
    expect(byMember.status).toBe(200);

    const reader = await apiKey(tenant, ['webhooks:read']);
    const writer = await apiKey(tenant, ['webhooks:write']);
    expect((await api('GET', endpoints(tenant), { token: reader })).status).toBe(200);
    expect((await api('DELETE', mine, { token: reader })).status).toBe(403);
    expect((await api('GET', endpoints(tenant), { token: writer })).status).toBe(403);
    // Another workspace's key: refused for this workspace (403, the kernel's rule for keys), and
    // through its own workspace the endpoint does not exist.
    const otherKey = await apiKey(other, ['webhooks:write']);
    expect((await api('DELETE', mine, { token: otherKey })).status).toBe(403);
    expect((await api('DELETE', `${endpoints(other)}/${endpoint.id}`, { token: otherKey })).status).toBe(404);

    expect(await list(tenant)).toEqual([{ ...endpoint, enabled: false, updated_at: expect.any(String) }]);
    expect((await api('DELETE', mine, { token: writer })).status).toBe(204);
    expect(await list(tenant)).toEqual([]);
  });
});
