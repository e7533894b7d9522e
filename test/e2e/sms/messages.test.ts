import { releaseHeldSms } from '../../../functions/sms/held.js';
import { api } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  createContact,
  entriesFor,
  getSms,
  newTenant,
  outboxTo,
  sendSms,
  setPlan,
  smsTenant,
  uniqueMobile,
  waitForSms,
  ws,
  type SmsTenant,
} from './fixtures.js';

/**
 * Direct messages: segments and charges (5 credits a segment, GSM-7 and UCS-2, multipart), charged
 * once; delivery callbacks from the simulator; bad input; the unsubscribed and the suppressed; a
 * provider failure; billing past due; tenancy.
 */

let tenant: SmsTenant;
beforeAll(async () => {
  tenant = await smsTenant();
});

const CASES = [
  { name: 'GSM-7, one part', body: 'a'.repeat(160), segments: 1, encoding: 'GSM-7' },
  { name: 'GSM-7, two parts of 153', body: 'a'.repeat(161), segments: 2, encoding: 'GSM-7' },
  { name: 'GSM-7, three parts', body: 'b'.repeat(307), segments: 3, encoding: 'GSM-7' },
  { name: 'UCS-2, one part', body: '你'.repeat(70), segments: 1, encoding: 'UCS-2' },
  { name: 'UCS-2, two parts of 67', body: '你'.repeat(71), segments: 2, encoding: 'UCS-2' },
];

describe('direct SMS', () => {
  it.each(CASES)('$name: segments counted, 5 credits each, charged once, delivered', async (c) => {
    const to = uniqueMobile();
    const res = await sendSms(tenant, { to_phone: to, body: c.body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      to_phone: to,
      from_phone: tenant.number,
      body: c.body,
      segments: c.segments,
      encoding: c.encoding,
      credits: 5 * c.segments,
    });
    expect(res.body.id).toMatch(/^sms_/);
    expect(['queued', 'sent', 'delivered']).toContain(res.body.status);
    const delivered = await waitForSms(tenant, res.body.id, ['delivered']);
    expect(delivered.delivered_at).toBeTruthy();
    const entries = await entriesFor(tenant, res.body.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ credits: -5 * c.segments, usage_kind: 'sms', quantity: c.segments });
    expect(outboxTo(to)).toHaveLength(1);
    expect(outboxTo(to)[0]).toMatchObject({ from: tenant.number, text: c.body });
  });

  it('a number without a contact becomes one (source manual), with a thread', async () => {
    const to = uniqueMobile();
    const res = await sendSms(tenant, { to_phone: to, body: 'Hello there' });
    expect(res.status).toBe(201);
    const found = await api('GET', `${ws(tenant)}/contacts/${res.body.contact_id}`, {
      token: tenant.owner.token,
    });
    expect(found.body).toMatchObject({ phone: to, source: 'manual' });
    const inbox = await api('GET', `${ws(tenant)}/sms-inbox`, { token: tenant.owner.token });
    expect(inbox.body.items[0]).toMatchObject({
      contact_id: res.body.contact_id,
      last_message: 'Hello there',
      unread: 0,
    });
  });

  it('bad input is a clear 4xx and charges nothing', async () => {
    const to = uniqueMobile();
    const other = await smsTenant();
    const bad: [Record<string, unknown>, number, string][] = [
      [{ to_phone: to, body: '' }, 422, 'body'],
      [{ to_phone: to, body: '   ' }, 422, 'body'],
      [{ to_phone: to, body: 'x'.repeat(1601) }, 422, 'body'],
      [{ to_phone: 'not a number', body: 'hi' }, 422, 'to_phone'],
      [{ to_phone: to, body: 'hi', from_phone: other.number }, 422, 'from_phone'],
      [{ to_phone: to, body: 'hi', from_phone: '+61491570156' }, 422, 'from_phone'],
      [{ to_phone: to, body: 'hi', colour: 'red' }, 422, 'colour'],
      [{ body: 'hi' }, 422, 'to_phone'],
    ];
    for (const [body, status, field] of bad) {
      const res = await sendSms(tenant, body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(JSON.stringify(res.body.detail)).toContain(field);
    }
    expect(outboxTo(to)).toHaveLength(0);
    const notJson = await api('POST', `${ws(tenant)}/sms`, {
      token: tenant.owner.token,
      rawBody: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(422);
  });

  it('1,600 characters is the most, and is sent (11 GSM-7 parts)', async () => {
    const res = await sendSms(tenant, { to_phone: uniqueMobile(), body: 'y'.repeat(1600) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ segments: 11, credits: 55 });
  });

  it('an unsubscribed contact or a suppressed number is 409 Contact has unsubscribed, nothing charged', async () => {
    const phone = uniqueMobile();
    const c = await createContact(tenant, { first_name: 'Una', phone, contactability: 'unsubscribed' });
    expect(c.contactability).toBe('unsubscribed');
    const res = await sendSms(tenant, { to_phone: phone, body: 'Hi Una' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Contact has unsubscribed' });
    const reply = await api('POST', `${ws(tenant)}/sms-inbox/${c.id}`, {
      token: tenant.owner.token,
      body: { body: 'Hi' },
    });
    expect(reply.status).toBe(409);

    const suppressed = uniqueMobile();
    const put = await api(
      'PUT',
      `/api/v1/organisations/${tenant.organisationId}/suppression-list/${encodeURIComponent(suppressed)}`,
      {
        token: tenant.owner.token,
        body: { reason: 'asked' },
      },
    );
    expect(put.status).toBe(200);
    const refused = await sendSms(tenant, { to_phone: suppressed, body: 'Hi' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: 'Contact has unsubscribed' });
    expect([...outboxTo(phone), ...outboxTo(suppressed)]).toHaveLength(0);
  });

  it('a provider error ends the message failed with the reason, and its charge is refunded', async () => {
    const res = await sendSms(tenant, { to_phone: '+61491570190', body: 'This will not go' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('failed');
    expect(res.body.failure_reason).toMatch(/unreachable/);
    expect(res.body.credits).toBe(0);
    const entries = await entriesFor(tenant, res.body.id);
    expect(entries.map((e) => e.credits).sort()).toEqual([-5, 5]);
  });

  it('an undelivered message stays charged (the provider took it) and ends failed', async () => {
    const res = await sendSms(tenant, { to_phone: '+61491570189', body: 'Lost on the way' });
    expect(res.status).toBe(201);
    const failed = await waitForSms(tenant, res.body.id, ['failed']);
    expect(failed.failure_reason).toMatch(/30003/);
    expect((await entriesFor(tenant, res.body.id)).map((e) => e.credits)).toEqual([-5]);
  });

  it('duplicated and out-of-order status callbacks: delivered once, never back to sent', async () => {
    const res = await sendSms(tenant, { to_phone: '+61491570188', body: 'Twice told' });
    expect(res.status).toBe(201);
    await waitForSms(tenant, res.body.id, ['delivered']);
    // The simulator sends delivered, sent, delivered, sent: wait for all four to be answered.
    await waitForQuiescence();
    expect((await getSms(tenant, res.body.id)).status).toBe('delivered');
  });

  it('held while billing is past due, sent and charged once when it recovers', async () => {
    const held = await smsTenant();
    await setPlan(held.organisationId, 'growth', 'past_due');
    const to = uniqueMobile();
    const res = await sendSms(held, { to_phone: to, body: 'Wait for it' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'queued', held: true });
    expect(await entriesFor(held, res.body.id)).toHaveLength(0);
    // Released too early (still past due): held again, nothing sent.
    expect(await releaseHeldSms(held.organisationId)).toBe(1);
    await waitFor(async () => ((await getSms(held, res.body.id)).held ? true : undefined), {
      what: 'held again',
    });
    await setPlan(held.organisationId, 'growth', 'active');
    await releaseHeldSms(held.organisationId);
    await releaseHeldSms(held.organisationId); // twice: sent once
    await waitForSms(held, res.body.id, ['sent', 'delivered']);
    await waitForSms(held, res.body.id, ['delivered']);
    expect(outboxTo(to)).toHaveLength(1);
    expect((await entriesFor(held, res.body.id)).map((e) => e.credits)).toEqual([-5]);
  });

  it('viewers read but cannot send (403); another tenant sees 404; API keys need sms scopes', async () => {
    const viewer = await addMember(tenant, 'viewer');
    const refused = await sendSms(tenant, { to_phone: uniqueMobile(), body: 'hi' }, viewer.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'Viewers have read-only access' });
    const sent = await sendSms(tenant, { to_phone: uniqueMobile(), body: 'mine' });
    expect((await api('GET', `${ws(tenant)}/sms/${sent.body.id}`, { token: viewer.token })).status).toBe(200);

    const stranger = await newTenant({ paid: true });
    expect(
      (await sendSms(tenant, { to_phone: uniqueMobile(), body: 'hi' }, stranger.owner.token)).status,
    ).toBe(404);
    expect(
      (await api('GET', `${ws(tenant)}/sms/${sent.body.id}`, { token: stranger.owner.token })).status,
    ).toBe(404);
    expect(
      (await api('GET', `${ws(stranger)}/sms/${sent.body.id}`, { token: stranger.owner.token })).status,
    ).toBe(404);
    expect((await api('GET', `${ws(tenant)}/sms/nope`, { token: tenant.owner.token })).status).toBe(404);

    const reader = await apiKey(tenant, ['sms:read']);
    expect((await sendSms(tenant, { to_phone: uniqueMobile(), body: 'hi' }, reader.key)).status).toBe(403);
    expect((await api('GET', `${ws(tenant)}/sms/${sent.body.id}`, { token: reader.key })).status).toBe(200);
    const writer = await apiKey(tenant, ['sms:write']);
    expect((await sendSms(tenant, { to_phone: uniqueMobile(), body: 'hi' }, writer.key)).status).toBe(201);
  });
});
