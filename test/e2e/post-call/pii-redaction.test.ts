import { receiveCall } from '../../helpers/cli.js';
import { Webhook } from 'standardwebhooks';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { modelRequests, textOf } from '../conversation/fixtures.js';
import { addMember, createAgent, newTenant, numberFor, waitForCall, ws } from '../calling/fixtures.js';
import { emailsTo, startReceiver, webhookSecret, type Receiver } from './fixtures.js';

/**
 * PII redaction before storage, end to end on the local stack: an agent with `pii_redaction` on takes
 * a call (`call receive --say`) in which the caller gives an e-mail (spoken) and a card number; the
 * call detail, its analysis and the signed post-call webhook hold tokens, while the model was sent
 * the raw e-mail during the call. An unknown category is a 422 that changes nothing; a viewer's
 * change 403; another organisation's 404.
 */

const CALLER = '+61491570178';
const SPOKEN_EMAIL = 'jane dot doe at example dot com';
const CARD = '4111 1111 1111 1111';
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

test('an unknown category is 422 and changes nothing; a viewer 403; another organisation 404', async () => {
  const tenant = await newTenant();
  const agent = await createAgent(tenant, {});
  const path = `${ws(tenant)}/agents/${agent.id}`;
  const bad = await api('PATCH', path, {
    token: tenant.owner.token,
    body: { pii_redaction: { enabled: true, categories: ['email', 'shoe_size'] } },
  });
  expect(bad.status).toBe(422);
  const after = await api('GET', path, { token: tenant.owner.token });
  expect(after.body.pii_redaction).toEqual({
    enabled: false,
    categories: expect.arrayContaining(['email', 'credit_card', 'person_name']) as string[],
    recordings: 'keep',
  });
  expect(after.body.version).toBe(agent.version);

  const viewer = await addMember(tenant, 'viewer');
  const denied = await api('PATCH', path, {
    token: viewer.token,
    body: { pii_redaction: { enabled: true } },
  });
  expect(denied.status).toBe(403);
  const other = await newTenant();
  const hidden = await api('PATCH', path.replace(tenant.workspaceId, other.workspaceId), {
    token: other.owner.token,
    body: { pii_redaction: { enabled: true } },
  });
  expect(hidden.status).toBe(404);
  const crossed = await api('PATCH', path, {
    token: other.owner.token,
    body: { pii_redaction: { enabled: true } },
  });
  expect(crossed.status).toBe(404);

  const on = await api('PATCH', path, {
    token: tenant.owner.token,
    body: { pii_redaction: { enabled: true, categories: ['email', 'credit_card'], recordings: 'drop' } },
  });
  expect(on.status).toBe(200);
  expect(on.body.pii_redaction).toEqual({
    enabled: true,
    categories: ['email', 'credit_card'],
    recordings: 'drop',
  });
  expect(on.body.version).toBe(agent.version + 1);
});

test('a call with redaction on: transcript, analysis and webhook hold tokens; the model got the raw e-mail', async () => {
  const tenant = await newTenant({ paid: true });
  const hook = await startReceiver();
  receivers.push(hook);
  const agent = await createAgent(tenant, {
    prompt: 'You are Riley, a real-estate agent.',
    post_call_actions: [{ type: 'webhook', config: { url: hook.url } }],
    pii_redaction: { enabled: true },
  });
  const number = (await numberFor(tenant, agent.id)).phone_number as string;
  const marker = `ref-${Date.now()}`;
  const callId = await receiveCall(
    CALLER,
    number,
    `Hi, about ${marker}. My email is ${SPOKEN_EMAIL} and my card is ${CARD}.`,
    `Again, that is ${SPOKEN_EMAIL}. Thanks, bye.`,
  );
  const call = await waitForCall(
    tenant,
    callId,
    (c) => c.status === 'completed' && c.analysis !== null,
    90_000,
  );
  const stored = JSON.stringify({
    transcript: call.transcript,
    analysis: call.analysis,
    tools: call.tool_calls,
  });
  expect(call.pii_redacted).toBe(true);
  expect(stored).not.toContain('jane');
  expect(stored).not.toContain('4111');
  const userLines = (call.transcript as Json[]).filter((t) => t.role === 'user').map((t) => t.text as string);
  expect(userLines[0]).toBe(`Hi, about ${marker}. My email is [EMAIL_1] and my card is [CREDIT_CARD_1].`);
  // The same e-mail said again is the same token.
  expect(userLines[1]).toBe('Again, that is [EMAIL_1]. Thanks, bye.');

  // The live conversation was not redacted: the model was sent what the caller said.
  const sent = (await modelRequests()).filter((r) =>
    r.messages.some((m) => textOf(m.content).includes(marker)),
  );
  expect(sent.length).toBeGreaterThan(0);
  const conversation = sent.filter((r) => !r.response_format);
  expect(conversation.some((r) => r.messages.some((m) => textOf(m.content).includes(SPOKEN_EMAIL)))).toBe(
    true,
  );
  // The post-call analysis was judged on the redacted transcript.
  const analysis = sent.filter((r) => r.response_format);
  for (const request of analysis)
    for (const message of request.messages) expect(textOf(message.content)).not.toContain('jane');

  // The post-call webhook, once, signed, with tokens.
  await waitFor(() => hook.requests.find((r) => JSON.parse(r.body).data.call_id === callId), {
    what: 'the post-call webhook',
    timeoutMs: 60_000,
  });
  await waitForQuiescence({ timeoutMs: 60_000 });
  const requests = hook.requests.filter((r) => JSON.parse(r.body).data.call_id === callId);
  expect(requests).toHaveLength(1);
  const payload = new Webhook(await webhookSecret(tenant)).verify(
    requests[0]!.body,
    requests[0]!.headers as Record<string, string>,
  ) as Json;
  expect(payload.data.pii_redacted).toBe(true);
  expect(requests[0]!.body).not.toContain('jane');
  expect(requests[0]!.body).not.toContain('4111');
  expect(JSON.stringify(payload.data.transcript)).toContain('[EMAIL_1]');
});

test('recordings "drop": the audio goes once analysed; the e-mail summary action holds tokens', async () => {
  const tenant = await newTenant({ paid: true });
  const summaryTo = `summary-${Date.now()}@pii.test`;
  const agent = await createAgent(tenant, {
    prompt: 'You are Riley, a real-estate agent.',
    post_call_actions: [{ type: 'email_summary', config: { to: summaryTo } }],
    pii_redaction: { enabled: true, recordings: 'drop' },
  });
  const number = (await numberFor(tenant, agent.id)).phone_number as string;
  const callId = await receiveCall(
    CALLER,
    number,
    `My email is ${SPOKEN_EMAIL}, card ${CARD}.`,
    'Thanks, bye.',
  );
  const call = await waitForCall(
    tenant,
    callId,
    (c) => c.status === 'completed' && c.analysis !== null,
    90_000,
  );
  expect(call.pii_redacted).toBe(true);
  const [email] = await waitFor(
    () => {
      const list = emailsTo(summaryTo);
      return list.length > 0 ? list : undefined;
    },
    { what: 'the e-mail summary', timeoutMs: 60_000 },
  );
  expect(email!.text).toContain('[EMAIL_1]');
  expect(email!.text).toContain('[CREDIT_CARD_1]');
  expect(email!.text).not.toContain('jane');
  expect(email!.text).not.toContain('4111');
  // Recorded (the agent records calls), then dropped once the analysis was stored.
  const dropped = await waitForCall(tenant, callId, (c) => c.recording === null, 60_000);
  expect(dropped.recording).toBeNull();
  expect(dropped.status_history.length).toBeGreaterThan(0);
  const audio = await api('GET', `${ws(tenant)}/calls/${callId}/recording`, { token: tenant.owner.token });
  expect(audio.status).toBe(404);
  await waitForQuiescence({ timeoutMs: 60_000 });
  expect(emailsTo(summaryTo)).toHaveLength(1);
}, 240_000);
