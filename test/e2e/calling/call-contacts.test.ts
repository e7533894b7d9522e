import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { repoRoot } from '../../../lib/local/paths.js';
import { api, type Json } from '../../helpers/http.js';
import { allPages } from '../../helpers/pages.js';
import { readyToCall, waitForCall, ws, type Tenant } from './fixtures.js';

/**
 * A call and its contact, both ways: a call to or from a number one of the workspace's contacts has
 * carries that contact's id (`contact_id` in the call detail and the log), and the call log's
 * `contact_id` filter lists a contact's calls, inbound and outbound. Another workspace's contact with
 * the same number is never linked.
 */

const run = promisify(execFile);

let tenant: Tenant;
let other: Tenant;
let agentId: string;
let ourNumber: string;

/** A number the telephony simulator answers, new for each test run. */
const uniqueMobile = () => `+61493${String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0')}`;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id as string;
  ourNumber = ready.number.phone_number as string;
  other = (await readyToCall()).tenant;
});

async function createContact(t: Tenant, body: Record<string, unknown>): Promise<Json> {
  const res = await api('POST', `${ws(t)}/contacts`, { token: t.owner.token, body });
  if (res.status !== 201) throw new Error(`create contact: ${res.status} ${res.text}`);
  return res.body;
}

async function callIn(from: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', 'bin/cli.ts', 'call', 'receive', '--from', from, '--to', ourNumber, '--json'],
    { cwd: repoRoot, env: process.env },
  );
  const json = JSON.parse(stdout.trim());
  expect(json.accepted).toBe(true);
  return json.call_id as string;
}

async function callOut(to: string): Promise<string> {
  const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: to },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const callsOf = (t: Tenant, contactId: string) =>
  allPages(`${ws(t)}/calls`, t.owner.token, { contact_id: contactId });

test('inbound and outbound calls of a known number carry its contact_id; the log lists a contact’s calls', async () => {
  const phone = uniqueMobile();
  const contact = await createContact(tenant, { first_name: 'Robin', phone });
  // Another workspace's contact with the same number: never this workspace's calls' contact.
  const stranger = await createContact(other, { first_name: 'Robin', phone });
  const unknown = uniqueMobile();

  const inbound = await callIn(phone);
  const outbound = await callOut(phone);
  const nobody = await callOut(unknown);

  const inDetail = await waitForCall(tenant, inbound);
  expect(inDetail).toMatchObject({ direction: 'inbound', from_phone: phone, contact_id: contact.id });
  const outDetail = await waitForCall(tenant, outbound);
  expect(outDetail).toMatchObject({ direction: 'outbound', to_phone: phone, contact_id: contact.id });
  expect((await waitForCall(tenant, nobody)).contact_id).toBeNull();

  const listed = await callsOf(tenant, contact.id);
  expect(listed.map((c) => c.id).sort()).toEqual([inbound, outbound].sort());
  expect(listed.every((c) => c.contact_id === contact.id)).toBe(true);

  // Tenant isolation: the other workspace's contact has no calls here, ours none there.
  expect(await callsOf(tenant, stranger.id)).toEqual([]);
  expect(await callsOf(other, contact.id)).toEqual([]);
  // An id that is no contact's id lists nothing (not a 500).
  const bad = await api('GET', `${ws(tenant)}/calls?contact_id=nope`, { token: tenant.owner.token });
  expect(bad.status).toBe(200);
  expect(bad.body.items).toEqual([]);
});
