import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readEmailOutbox, type OutboxEmail } from '../../../functions/providers/email/local-outbox.js';
import { readSmsOutbox, type OutboxSms } from '../../../functions/providers/sms/local-outbox.js';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';
import { api, baseUrl, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { newTenant, ws, type Tenant } from '../calling/fixtures.js';

/**
 * SMS through the gateway: a paid tenant with a number of its own, contacts made through the contacts
 * routes, inbound messages from the SMS simulator (as `npm run cli -- sms receive` does) or signed here
 * (to replay one, or to leave it unsigned), and the simulator's outbox and the email outbox read back.
 */
export { addMember, apiKey, newTenant, setPlan, setBalance, ws, type Tenant } from '../calling/fixtures.js';

export interface SmsTenant extends Tenant {
  /** The workspace's number (E.164): SMS go out from it and come in to it. */
  number: string;
}

/** A paid tenant (Growth, 64,000 credits) with one phone number. */
export async function smsTenant(): Promise<SmsTenant> {
  const tenant = await newTenant({ paid: true });
  const bought = await api('POST', `${ws(tenant)}/phone-numbers`, {
    token: tenant.owner.token,
    body: { country: 'AU' },
  });
  if (bought.status !== 201) throw new Error(`buy number: ${bought.status} ${bought.text}`);
  return { ...tenant, number: bought.body.phone_number as string };
}

let sequence = Math.floor(Math.random() * 400_000);
/** A mobile number in the range the simulators treat as ordinary (+61 491 57x xxx avoided). */
export function uniqueMobile(): string {
  sequence += 1;
  return `+61492${String(sequence % 1_000_000).padStart(6, '0')}`;
}

export async function createContact(tenant: Tenant, body: Record<string, unknown>): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/contacts`, { token: tenant.owner.token, body });
  if (res.status !== 201) throw new Error(`create contact: ${res.status} ${res.text}`);
  return res.body;
}

export async function sendSms(tenant: Tenant, body: Record<string, unknown>, token = tenant.owner.token) {
  return api('POST', `${ws(tenant)}/sms`, { token, body });
}

export async function getSms(tenant: Tenant, id: string): Promise<Json> {
  const res = await api('GET', `${ws(tenant)}/sms/${id}`, { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`get sms: ${res.status} ${res.text}`);
  return res.body;
}

/** Waits for a message to reach one of `statuses`. */
export async function waitForSms(tenant: Tenant, id: string, statuses: string[]): Promise<Json> {
  let last: Json;
  return waitFor(
    async () => {
      last = await getSms(tenant, id);
      return statuses.includes(last.status) ? last : undefined;
    },
    { what: () => `SMS ${id} to be ${statuses.join('|')}; last ${JSON.stringify(last)}` },
  );
}

export async function ledger(tenant: Tenant): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const res = await api('GET', `/api/v1/organisations/${tenant.organisationId}/billing/ledger${query}`, {
      token: tenant.owner.token,
    });
    if (res.status !== 200) throw new Error(`ledger: ${res.status} ${res.text}`);
    items.push(...(res.body.items as Json[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return items;
}

/** The ledger entries whose source names this SMS. */
export const entriesFor = async (tenant: Tenant, smsId: string) =>
  (await ledger(tenant)).filter((entry) => String(entry.source).includes(smsId));

function stateDir(): string {
  const path = process.env.LOCAL_STACK_STATE;
  if (!path) throw new Error('no local stack');
  return (JSON.parse(readFileSync(path, 'utf8')) as { state_dir: string }).state_dir;
}

export const outboxTo = (to: string): OutboxSms[] =>
  readSmsOutbox(join(stateDir(), 'outbox', 'sms.jsonl')).filter((sms) => sms.to === to);
export const emailsTo = (to: string): OutboxEmail[] =>
  readEmailOutbox(join(stateDir(), 'outbox', 'email.jsonl')).filter((email) => email.to === to);

const token = () => stackState().env.TELEPHONY_AUTH_TOKEN;

/** The SMS simulator delivers a signed inbound message (what `npm run cli -- sms receive` does). */
export async function receive(input: { from: string; to: string; body: string; sid?: string }) {
  const res = await fetch(`${stackState().env.SMS_SIMULATOR_URL}/inbound`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  if (res.status !== 201) throw new Error(`sms simulator inbound: ${res.status} ${await res.text()}`);
  return (await res.json()) as { sid: string; http_status: number };
}

export const smsWebhookUrl = () => `${baseUrl()}/webhooks/telephony/sms`;

/** POSTs form parameters to the SMS webhook, signed like the provider (or not, or badly). */
export async function postWebhook(
  params: Record<string, string>,
  options: { query?: string; sign?: 'valid' | 'none' | 'bad' } = {},
): Promise<{ status: number; text: string }> {
  const url = `${smsWebhookUrl()}${options.query ? `?${options.query}` : ''}`;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const sign = options.sign ?? 'valid';
  if (sign !== 'none') {
    headers[SIGNATURE_HEADER] =
      sign === 'valid' ? signTwilioRequest(token(), url, params) : 'bm90IGEgc2lnbmF0dXJl';
  }
  const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
  return { status: res.status, text: await res.text() };
}

export const inboundParams = (input: { sid: string; from: string; to: string; body: string }) => ({
  AccountSid: `AC${'0'.repeat(32)}`,
  MessageSid: input.sid,
  SmsSid: input.sid,
  From: input.from,
  To: input.to,
  Body: input.body,
  NumMedia: '0',
});

export async function thread(tenant: Tenant, contactId: string): Promise<Json[]> {
  const res = await api('GET', `${ws(tenant)}/sms-inbox/${contactId}?limit=100`, {
    token: tenant.owner.token,
  });
  if (res.status !== 200) throw new Error(`thread: ${res.status} ${res.text}`);
  return res.body.items as Json[];
}

export async function contact(tenant: Tenant, contactId: string): Promise<Json> {
  const res = await api('GET', `${ws(tenant)}/contacts/${contactId}`, { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`contact: ${res.status} ${res.text}`);
  return res.body;
}

export async function contactByPhone(tenant: Tenant, phone: string): Promise<Json | undefined> {
  const res = await api('GET', `${ws(tenant)}/contacts?q=${encodeURIComponent(phone)}`, {
    token: tenant.owner.token,
  });
  return (res.body.items as Json[]).find((c) => c.phone === phone);
}
