/**
 * Request bodies over HTTP, through the local gateway and the HTTP kernel: bytes that are not UTF-8
 * are not JSON (422 json_invalid), never stored with replacement characters.
 */
import { newTenant, ws } from './calling/fixtures.js';
import { baseUrl } from '../helpers/http.js';

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
