/**
 * Request bodies over HTTP, through the local gateway and the HTTP kernel: bytes that are not UTF-8
 * are not JSON (422 json_invalid), never stored with replacement characters; a viewer's write is 403
 * before any 422 of its body.
 */
import { addMember, newTenant, ws } from './calling/fixtures.js';
import { api, baseUrl } from '../helpers/http.js';

test('a JSON body that is not valid UTF-8 is 422 json_invalid, and nothing is created', async () => {
  const tenant = await newTenant();
  const body = Buffer.concat([
    Buffer.from('{"phone": "+61491570156", "first_name": "Zo'),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}'),
  ]);
  const res = await fetch(`${baseUrl()}${ws(tenant)}/contacts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.owner.token}`, 'content-type': 'application/json' },
    body,
  });
  expect(res.status).toBe(422);
  const json = (await res.json()) as { detail: { type: string; msg: string }[] };
  expect(json.detail[0]).toMatchObject({
    type: 'json_invalid',
    msg: 'JSON decode error: the body is not valid UTF-8',
  });
  const list = await fetch(`${baseUrl()}${ws(tenant)}/contacts`, {
    headers: { authorization: `Bearer ${tenant.owner.token}` },
  });
  expect(((await list.json()) as { items: unknown[] }).items).toEqual([]);
});

describe("a viewer's write is 403 before any 422", () => {
  const badBodies: [string, string][] = [
    ['a body that is not JSON', '{"phone": '],
    ['a body its schema refuses', JSON.stringify({ phone: 12, surprise: true })],
  ];

  it.each(badBodies)(
    '%s: a viewer is told viewers are read-only; a member gets the 422',
    async (_what, body) => {
      const tenant = await newTenant();
      const viewer = await addMember(tenant, 'viewer');
      const member = await addMember(tenant, 'member');
      const post = (token: string) =>
        fetch(`${baseUrl()}${ws(tenant)}/contacts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
        });
      const refused = await post(viewer.token);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: string }).error).toBe('Viewers have read-only access');
      expect((await post(member.token)).status).toBe(422);
    },
  );

  it("a viewer's valid write is 403 as before, and a viewer's read is still answered", async () => {
    const tenant = await newTenant();
    const viewer = await addMember(tenant, 'viewer');
    const res = await api('POST', `${ws(tenant)}/contacts`, {
      token: viewer.token,
      body: { phone: '+61491570156', first_name: 'Zoe' },
    });
    expect(res.status).toBe(403);
    expect((await api('GET', `${ws(tenant)}/contacts`, { token: viewer.token })).status).toBe(200);
  });
});
