import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { callKey } from '../../../functions/calling/call-shards.js';
import { CallEntity } from '../../../functions/calling/entities.js';
import { readCall } from '../../../functions/calling/lifecycle.js';
import { SmsLastOutboundEntity } from '../../../functions/sms/entities.js';
import type { StackState } from '../../../lib/local/state.js';
import { receiveSms } from '../../../lib/tools/cli/sms.js';
import { getCallRecord } from '../../../functions/post-call/pipeline.js';
import { receiveCall } from '../../helpers/cli.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { createAgent, newTenant, numberFor, TEST_NUMBERS, waitForCall, ws } from '../calling/fixtures.js';
import { smsTo } from './fixtures.js';

/**
 * PII redaction before storage, what leaves the service after the call, end to end on the local stack:
 * a caller of an agent with `pii_redaction` on says an e-mail (spoken) and a card number, and the
 * owner's post-call SMS (as the local SMS provider sent it), the public recording page (HTML and JSON,
 * with the caller's SMS reply giving them again) and the calls' export (the list the dashboard's CSV export is built from: GET /calls) hold tokens or
 * nothing of them, never the values. A warm transfer of such a call stores its summary and whisper
 * with the transcript's tokens, while the person dialled hears the real values, once.
 */

const CALLER = '+61491570179';
const OWNER = '+61491570183';
const TARGET = '+61491570119';
const SPOKEN_EMAIL = 'jane dot doe at example dot com';
const CARD = '4111 1111 1111 1111';
const RAW = ['jane', 'doe at', '4111', '1111 1111'];

const expectNoRawValue = (text: string) => {
  for (const raw of RAW) expect(text.toLowerCase()).not.toContain(raw);
};

test('the owner’s SMS, the recording page and the calls’ export hold tokens, never the values', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Riley, a real-estate agent.',
    post_call_actions: [{ type: 'sms_owner', config: { to: OWNER } }, { type: 'sms_caller' }],
    pii_redaction: { enabled: true },
  });
  const number = (await numberFor(tenant, agent.id)).phone_number as string;
  const marker = `ref-${Date.now()}`;
  const callId = await receiveCall(
    CALLER,
    number,
    `Hi, about ${marker}. My email is ${SPOKEN_EMAIL} and my card is ${CARD}.`,
    'Thanks, bye.',
  );
  const call = await waitForCall(
    tenant,
    callId,
    (c) => c.status === 'completed' && c.analysis !== null && !!c.short_url,
    90_000,
  );
  expect(call.pii_redacted).toBe(true);

  // The owner's SMS, as the local SMS provider sent it: the summary's tokens.
  const mine = () => smsTo(OWNER).filter((sms) => sms.text.includes(marker));
  await waitFor(() => (mine().length > 0 ? mine() : undefined), {
    what: 'the owner’s post-call SMS',
    timeoutMs: 60_000,
  });

  // The public recording page (the short link's code): the recording and the caller's SMS replies to
  // the post-call SMS that carried the link, with tokens (the SMS inbox keeps them as received).
  const code = new URL(call.short_url as string).pathname.split('/').pop() as string;
  await waitFor(
    async () => {
      const { data } = await SmsLastOutboundEntity.get({ workspaceId: tenant.workspaceId, phone: CALLER }).go(
        {
          consistent: true,
        },
      );
      return data?.shortCode === code ? data : undefined;
    },
    { what: `the caller's post-call SMS carrying ${code}`, timeoutMs: 60_000 },
  );
  const reply = `Also, it is jane.doe@example.com and the card ${CARD}.`;
  await receiveSms(stackState() as unknown as StackState, { from: CALLER, to: number, body: reply });
  const shown = 'Also, it is [EMAIL_1] and the card [CREDIT_CARD_1].';
  await waitFor(
    async () => {
      const res = await api('GET', `/api/v1/public/recordings/${code}/replies`);
      return res.status === 200 && res.body.items.length > 0 ? res.body.items : undefined;
    },
    { what: `the reply to ${code}`, timeoutMs: 60_000 },
  );
  const page = await api('GET', `/r/${code}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain('<audio id="recording"');
  expect(page.text).toContain(`<p class="reply-body">${shown}</p>`);
  expectNoRawValue(page.text);
  const json = await api('GET', `/api/v1/public/recordings/${code}`);
  expect(json.status).toBe(200);
  expect(json.body.recording.available).toBe(true);
  expect(json.body.replies).toEqual([{ body: shown, received_at: expect.any(String) }]);
  expectNoRawValue(JSON.stringify(json.body));
  const replies = await api('GET', `/api/v1/public/recordings/${code}/replies`);
  expect(replies.body.items).toEqual([{ body: shown, received_at: expect.any(String) }]);

  // The export: the calls' list (the dashboard's CSV is built from its items) and the call's detail.
  const list = await api('GET', `${ws(tenant)}/calls?phone=${encodeURIComponent(CALLER)}`, {
    token: tenant.owner.token,
  });
  expect(list.status).toBe(200);
  const items = (list.body.items as Json[]).filter((item) => item.id === callId);
  expect(items).toHaveLength(1);
  expect(items[0]!.summary_line).toContain(
    `The caller said: "Hi, about ${marker}. My email is [EMAIL_1] and my card is [CREDIT_CARD_1]."`,
  );
  expectNoRawValue(JSON.stringify(list.body));
  const detail = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
  expect(JSON.stringify(detail.body)).toContain('[EMAIL_1]');
  expectNoRawValue(JSON.stringify(detail.body));

  // Sent once.
  await waitForQuiescence({ timeoutMs: 60_000 });
  const sent = mine();
  expect(sent).toHaveLength(1);
  expect(sent[0]!.text).toContain('My email is [EMAIL_1] and my card is [CREDIT_CARD_1].');
  expectNoRawValue(sent[0]!.text);
}, 180_000);

const telephonyOutbox = () => join(stackState().env.LOCAL_STATE_DIR, 'outbox', 'telephony.jsonl');
/** What the telephony simulator's people heard on a call (the whisper). */
const heard = (providerCallId: string): Json[] =>
  existsSync(telephonyOutbox())
    ? readFileSync(telephonyOutbox(), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json)
        .filter((line) => line.provider_call_id === providerCallId)
    : [];

test('a warm transfer: the stored summary and whisper hold the transcript’s tokens; the person heard the values', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Riley, a real-estate agent.',
    transfer: { phone_number: TARGET, mode: 'warm', whisper: 'Call from Harbour Realty. {{summary}}' },
    pii_redaction: { enabled: true },
  });
  const number = (await numberFor(tenant, agent.id)).phone_number as string;
  const said = `My email is ${SPOKEN_EMAIL} and my card is ${CARD}.`;
  const ask = 'Can I speak to a person, please?';
  const callId = await receiveCall(CALLER, number, said, ask);
  await waitForCall(tenant, callId, (c) => c.status === 'completed', 90_000);
  await waitFor(async () => (await readCall(tenant.workspaceId, callId))?.postCallSentAt, {
    what: 'the call reported to the post-call pipeline',
    timeoutMs: 30_000,
  });
  const detail = (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body;

  // The model's summary (the simulator quotes the caller's lines), stored with the transcript's tokens.
  const summary = `On this call the caller said: "My email is [EMAIL_1] and my card is [CREDIT_CARD_1]." and "${ask}".`;
  expect(detail).toMatchObject({
    pii_redacted: true,
    conversation_ended_by: 'transfer',
    transfer: { mode: 'warm', to: TARGET, summary, status: 'connected' },
  });
  const userLines = (detail.transcript as Json[]).filter((t) => t.role === 'user').map((t) => t.text);
  expect(userLines[0]).toBe('My email is [EMAIL_1] and my card is [CREDIT_CARD_1].');
  // As stored: the whisper with tokens; the real values the person heard are gone with the dial.
  const stored = await readCall(tenant.workspaceId, callId);
  expect(stored?.transfer).toMatchObject({ summary, whisper: `Call from Harbour Realty. ${summary}` });
  expect(stored?.liveWhisper).toBeUndefined();
  expectNoRawValue(JSON.stringify(stored));

  // The person heard the whisper with the real values, once.
  const whisper = `Call from Harbour Realty. On this call the caller said: "${said}" and "${ask}".`;
  await waitForQuiescence({ timeoutMs: 60_000 });
  expect(heard(detail.provider_call_id as string)).toEqual([
    { at: expect.any(String), provider_call_id: detail.provider_call_id, kind: 'whisper', text: whisper },
  ]);

  // The post-call record (the webhook's payload) carries the stored summary.
  const record = await waitFor(() => getCallRecord(tenant.workspaceId, callId), {
    what: 'the post-call record',
    timeoutMs: 30_000,
  });
  expect(record.transfer).toEqual({ mode: 'warm', to: TARGET, summary, status: 'connected' });
  expectNoRawValue(JSON.stringify(record));
}, 180_000);

test('a whisper’s real values left on a call whose dial never reported go with the call’s end', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, { pii_redaction: { enabled: true } });
  await numberFor(tenant, agent.id);
  const started = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: TEST_NUMBERS.long },
  });
  expect(started.status).toBe(201);
  const callId = started.body.id as string;
  await waitForCall(tenant, callId, (c) => c.status === 'inprogress', 60_000);
  // As a warm transfer under way leaves it (conversation/transfer.ts), its dial's outcome not yet in.
  await CallEntity.patch(callKey(tenant.workspaceId, callId))
    .set({ liveWhisper: 'Call from Harbour Realty. The caller is jane.doe@example.com.' })
    .go({ response: 'none' });
  const ended = await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: tenant.owner.token });
  expect(ended.status).toBe(200);
  const call = await readCall(tenant.workspaceId, callId);
  expect(call?.status).toBe('completed');
  expect(call?.liveWhisper).toBeUndefined();
  await waitForQuiescence({ timeoutMs: 60_000 });
  expect((await readCall(tenant.workspaceId, callId))?.liveWhisper).toBeUndefined();
}, 120_000);
