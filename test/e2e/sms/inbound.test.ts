import { randomBytes } from 'node:crypto';
import { listRepliesForShortCode } from '../../../functions/sms/inbound.js';
import { sendSms as sendSmsService } from '../../../functions/sms/send-sms.js';
import { api } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  contact,
  contactByPhone,
  createContact,
  emailsTo,
  inboundParams,
  outboxTo,
  postWebhook,
  receive,
  sendSms,
  smsTenant,
  thread,
  uniqueMobile,
  ws,
  type SmsTenant,
} from './fixtures.js';

/**
 * Inbound SMS through the simulator (signed exactly as the provider signs): threads and unread
 * counts, an unknown sender becoming a contact, opt-out and opt-in keywords, hot-reply alerts by
 * email, replies tied to what they answer; replays and unsigned requests change nothing.
 */

let tenant: SmsTenant;
beforeAll(async () => {
  tenant = await smsTenant();
});

const sid = () => `SM${randomBytes(16).toString('hex')}`;

describe('inbound SMS', () => {
  it('an unknown sender becomes a contact (source manual) with a thread; unread until read; a reply goes out', async () => {
    const from = uniqueMobile();
    const got = await receive({ from, to: tenant.number, body: 'Hello, who is this?' });
    expect(got.http_status).toBe(200);
    const person = await contactByPhone(tenant, from);
    expect(person).toMatchObject({ phone: from, source: 'manual', contactability: 'contactable' });
    const inbox = await api('GET', `${ws(tenant)}/sms-inbox`, { token: tenant.owner.token });
    expect(inbox.body.items[0]).toMatchObject({
      id: person.id,
      contact_id: person.id,
      phone: from,
      last_message: 'Hello, who is this?',
      unread: 1,
    });
    await receive({ from, to: tenant.number, body: 'Anyone?' });
    const again = await api('GET', `${ws(tenant)}/sms-inbox`, { token: tenant.owner.token });
    expect(again.body.items[0]).toMatchObject({ contact_id: person.id, unread: 2, last_message: 'Anyone?' });

    const messages = await thread(tenant, person.id);
    expect(messages.map((m) => [m.direction, m.body])).toEqual([
      ['inbound', 'Anyone?'],
      ['inbound', 'Hello, who is this?'],
    ]);
    const read = await api('GET', `${ws(tenant)}/sms-inbox`, { token: tenant.owner.token });
    expect(read.body.items[0]).toMatchObject({ contact_id: person.id, unread: 0 });

    const reply = await api('POST', `${ws(tenant)}/sms-inbox/${person.id}`, {
      token: tenant.owner.token,
      body: { body: 'It is the agency. How can we help?' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      kind: 'reply',
      to_phone: from,
      from_phone: tenant.number,
      credits: 5,
    });
    expect(outboxTo(from)).toHaveLength(1);
    const after = await thread(tenant, person.id);
    expect(after[0]).toMatchObject({ direction: 'outbound', body: 'It is the agency. How can we help?' });
  });

  it('STOP unsubscribes (any case, alone) and confirms once; a later send is 409; START subscribes again', async () => {
    const phone = uniqueMobile();
    const c = await createContact(tenant, { first_name: 'Sam', phone });
    expect((await sendSms(tenant, { to_phone: phone, body: 'Open home on Saturday' })).status).toBe(201);

    await receive({ from: phone, to: tenant.number, body: 'please stop texting' });
    expect((await contact(tenant, c.id)).contactability).toBe('contactable');

    await receive({ from: phone, to: tenant.number, body: '  sToP ' });
    expect((await contact(tenant, c.id)).contactability).toBe('unsubscribed');
    const confirmations = () => outboxTo(phone).filter((sms) => /unsubscribed/.test(sms.text));
    await waitFor(() => (confirmations().length === 1 ? true : undefined), { what: 'the confirmation' });
    // A second opt-out keyword changes nothing and confirms nothing more.
    await receive({ from: phone, to: tenant.number, body: 'UNSUBSCRIBE' });
    expect(confirmations()).toHaveLength(1);

    const refused = await sendSms(tenant, { to_phone: phone, body: 'One more thing' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: 'Contact has unsubscribed' });

    await receive({ from: phone, to: tenant.number, body: 'Start' });
    expect((await contact(tenant, c.id)).contactability).toBe('contactable');
    expect((await sendSms(tenant, { to_phone: phone, body: 'Welcome back' })).status).toBe(201);
  });

  it.each(['STOPALL', 'cancel', 'End', 'QUIT', 'optout', 'REVOKE', 'stop.'])('%s opts out', async (word) => {
    const phone = uniqueMobile();
    const c = await createContact(tenant, { phone });
    await receive({ from: phone, to: tenant.number, body: word });
    expect((await contact(tenant, c.id)).contactability).toBe('unsubscribed');
    await receive({ from: phone, to: tenant.number, body: 'UNSTOP' });
    expect((await contact(tenant, c.id)).contactability).toBe('contactable');
  });

  it('a hot reply emails each hot-reply recipient once; a cold or negated one emails nobody', async () => {
    const alerts = [`hot-${sid().slice(2, 12)}@example.com`, `hot-${sid().slice(2, 12)}@example.com`];
    const set = await api('PATCH', `${ws(tenant)}`, {
      token: tenant.owner.token,
      body: { hot_reply_alert_recipients: alerts },
    });
    expect(set.status).toBe(200);
    const phone = uniqueMobile();
    await createContact(tenant, { first_name: 'Hana', last_name: 'Hot', phone });
    await sendSms(tenant, { to_phone: phone, body: 'Are you still thinking of selling?' });

    await receive({ from: phone, to: tenant.number, body: "Not interested, don't call me" });
    await receive({ from: phone, to: tenant.number, body: 'Maybe later' });
    expect(alerts.flatMap(emailsTo)).toHaveLength(0);

    const messageSid = sid();
    await receive({ from: phone, to: tenant.number, body: 'Yes! Call me tomorrow please', sid: messageSid });
    for (const to of alerts) {
      const mails = emailsTo(to);
      expect(mails).toHaveLength(1);
      expect(mails[0].subject).toBe('Hot SMS reply from Hana Hot');
      expect(mails[0].text).toContain('Yes! Call me tomorrow please');
    }
    // The provider replays the same message: nothing twice.
    await receive({ from: phone, to: tenant.number, body: 'Yes! Call me tomorrow please', sid: messageSid });
    expect(alerts.flatMap(emailsTo)).toHaveLength(2);
    const person = await contactByPhone(tenant, phone);
    const messages = await thread(tenant, person.id);
    expect(messages.filter((m) => m.body === 'Yes! Call me tomorrow please')).toHaveLength(1);
    expect(messages[0]).toMatchObject({ hot: true, direction: 'inbound' });
  });

  it('a replayed MessageSid changes nothing; an unsigned or badly signed one is 401 and changes nothing', async () => {
    const phone = uniqueMobile();
    const params = inboundParams({ sid: sid(), from: phone, to: tenant.number, body: 'STOP' });
    expect((await postWebhook(params, { sign: 'none' })).status).toBe(401);
    expect((await postWebhook(params, { sign: 'bad' })).status).toBe(401);
    expect(await contactByPhone(tenant, phone)).toBeUndefined();

    const first = await postWebhook(params);
    expect(first.status).toBe(200);
    const second = await postWebhook(params);
    expect(second.status).toBe(200);
    const person = await contactByPhone(tenant, phone);
    expect(person.contactability).toBe('unsubscribed');
    expect(await thread(tenant, person.id)).toHaveLength(2); // the STOP and its one confirmation
    const inbox = await api('GET', `${ws(tenant)}/sms-inbox?limit=100`, { token: tenant.owner.token });
    expect(inbox.body.items.filter((t: { contact_id: string }) => t.contact_id === person.id)).toHaveLength(
      1,
    );

    // A status callback unsigned, or for a message of another workspace, changes nothing either.
    const sent = await sendSms(tenant, { to_phone: uniqueMobile(), body: 'status check' });
    const status = { MessageSid: 'SMfake', MessageStatus: 'failed', ErrorCode: '30005' };
    const query = `event=status&workspace_id=${tenant.workspaceId}&message_id=${sent.body.id}`;
    expect((await postWebhook(status, { query, sign: 'none' })).status).toBe(401);
    expect((await postWebhook(status, { query })).status).toBe(200); // another provider message: ignored
    const message = await api('GET', `${ws(tenant)}/sms/${sent.body.id}`, { token: tenant.owner.token });
    expect(message.body.status).not.toBe('failed');
  });

  it('replies are tied to the message they answer; those to a message with a short code are listed by it', async () => {
    const phone = uniqueMobile();
    const shortCode = `t${randomBytes(6).toString('hex')}`;
    const sent = await sendSmsService({
      workspaceId: tenant.workspaceId,
      organisationId: tenant.organisationId,
      to: phone,
      body: `Thanks for your call. Listen again: https://example.test/r/${shortCode}`,
      kind: 'post_call',
      shortCode,
    });
    expect(sent.status).not.toBe('failed');
    await receive({ from: phone, to: tenant.number, body: 'Thanks, that was helpful' });
    await receive({ from: phone, to: tenant.number, body: 'STOP' });
    const replies = await listRepliesForShortCode(shortCode);
    expect(replies).toEqual([{ body: 'Thanks, that was helpful', received_at: expect.any(String) }]);
    const person = await contactByPhone(tenant, phone);
    const messages = await thread(tenant, person.id);
    const reply = messages.find((m) => m.body === 'Thanks, that was helpful');
    expect(reply.in_reply_to).toBe(sent.messageId);
    expect(await listRepliesForShortCode('unknown-code')).toEqual([]);
  });

  it('a message to a number that is not ours is ignored', async () => {
    const from = uniqueMobile();
    const res = await receive({ from, to: '+61255599999', body: 'Hello?' });
    expect(res.http_status).toBe(200);
  });
});
