import { receiveCall as receiveFrom } from '../../helpers/cli.js';
import { Webhook } from 'standardwebhooks';
import { processCallEnded } from '../../../functions/post-call/pipeline.js';
import {
  languageModel,
  setLanguageModel,
  type LanguageModelPort,
} from '../../../functions/providers/llm/index.js';
import { structuredRequests, textOf } from '../conversation/fixtures.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { createAgent, newTenant, numberFor, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { startReceiver, webhookSecret, type Receiver } from './fixtures.js';

/**
 * Post-call analysis by the language model, end to end on the local stack: a caller talks to the agent
 * (`call receive --say`), the post-call pipeline asks the model (the local model simulator, by its
 * documented rules) once, and the analysis — summary, success, sentiment and the agent's own
 * `analysis_fields` — shows in the call detail and the signed post-call webhook. When the model fails
 * (500, or output that is not JSON), the rules answer (`source: rules`) and the webhook still goes out
 * once. Bad `analysis_fields` are 422 and change nothing.
 */

const CALLER = '+61491570177';
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

const FIELDS = [
  { name: 'budget', type: 'number', description: "The buyer's budget in dollars" },
  { name: 'pre_approved', type: 'boolean', description: 'Whether their finance is pre-approved' },
  { name: 'suburb', type: 'string', description: 'The suburb they want' },
  { name: 'intent', type: 'enum', description: 'What they want to do', enum_values: ['buy', 'sell', 'rent'] },
  { name: 'email', type: 'string', description: 'Their e-mail address' },
];

const receiveCall = (number: string, ...lines: string[]) => receiveFrom(CALLER, number, ...lines);

async function analysedAgent(tenant: Tenant, hook: Receiver): Promise<{ agent: Json; number: string }> {
  const agent = await createAgent(tenant, {
    prompt: 'You are Riley, a real-estate agent. We can offer an inspection on Saturday at 10am.',
    analysis_fields: FIELDS,
    success_criteria: 'The caller books an inspection.',
    post_call_actions: [{ type: 'webhook', config: { url: hook.url } }],
  });
  return { agent, number: (await numberFor(tenant, agent.id)).phone_number as string };
}

/** The one signed webhook the call got (after the stack went quiet: none more will come). */
async function theWebhook(tenant: Tenant, hook: Receiver, callId: string): Promise<Json> {
  await waitFor(() => hook.requests.find((r) => JSON.parse(r.body).data.call_id === callId), {
    what: 'the post-call webhook',
    timeoutMs: 60_000,
  });
  await waitForQuiescence({ timeoutMs: 60_000 });
  const requests = hook.requests.filter((r) => JSON.parse(r.body).data.call_id === callId);
  expect(requests).toHaveLength(1);
  const secret = await webhookSecret(tenant);
  return new Webhook(secret).verify(requests[0].body, requests[0].headers as Record<string, string>) as Json;
}

test('a call with analysis_fields: the model fills them, in the call detail and the signed webhook, once', async () => {
  const tenant = await newTenant({ paid: true });
  const hook = await startReceiver();
  receivers.push(hook);
  const { agent, number } = await analysedAgent(tenant, hook);
  expect(agent.analysis_fields).toEqual(FIELDS);
  expect(agent.success_criteria).toBe('The caller books an inspection.');

  const callId = await receiveCall(
    number,
    'Hi, I want to buy a home. My budget is $900,000 and the suburb is Bondi.',
    'Can I come to an inspection?',
    "Yes, book me in. I'm pre approved as well. Thanks, that's great.",
  );
  const call = await waitForCall(
    tenant,
    callId,
    (c) => c.status === 'completed' && c.analysis !== null,
    90_000,
  );
  const expected = {
    source: 'model',
    // What was asked and answered (the simulator's documented summary).
    summary: expect.stringContaining(
      'The caller asked: "Can I come to an inspection?" The agent answered: "',
    ),
    call_successful: true,
    user_sentiment: 'positive',
    custom: { budget: 900000, pre_approved: true, suburb: 'Bondi', intent: 'buy', email: null },
  };
  expect(call.analysis).toEqual(expected);
  expect(call.analysis.summary).toContain('The caller agreed: "Yes, book me in. I\'m pre approved as well.');

  // What the model was asked, once: the agent's fields, its success criteria and the call's own lines
  // (the simulator's answer above only proves it can read them back).
  const analysisRequests = await structuredRequests(
    'call_analysis',
    'Caller: Hi, I want to buy a home. My budget is $900,000',
  );
  expect(analysisRequests).toHaveLength(1);
  const messageOf = (role: string) =>
    textOf(analysisRequests[0].messages.find((m) => m.role === role)?.content);
  expect(messageOf('system')).toContain("- budget (number): The buyer's budget in dollars");
  expect(messageOf('system')).toContain('- intent (enum: one of buy, sell, rent): What they want to do');
  expect(messageOf('system')).toContain('The caller books an inspection.');
  expect(messageOf('user')).toContain("Caller: Yes, book me in. I'm pre approved as well.");
  expect(messageOf('user')).toMatch(/^Agent: \S/m);
  const schema = analysisRequests[0].response_format?.json_schema?.schema as Json;
  expect(Object.keys(schema.properties.custom.properties)).toEqual(FIELDS.map((f) => f.name));
  expect(schema.properties.custom.properties.intent.enum).toEqual(['buy', 'sell', 'rent', null]);

  const payload = await theWebhook(tenant, hook, callId);
  expect(payload.data.analysis).toEqual(call.analysis);

  // A redelivered call.ended finds the record built: the model is not asked again, nothing changes.
  const real = languageModel();
  let asked = 0;
  const counting: LanguageModelPort = {
    provider: real.provider,
    model: real.model,
    stream: (request) => real.stream(request),
    complete: (request) => {
      asked += 1;
      return real.complete(request);
    },
  };
  setLanguageModel(counting);
  try {
    const again = await processCallEnded({
      type: 'call.ended',
      workspace_id: tenant.workspaceId,
      organisation_id: tenant.organisationId,
      call_id: callId,
    });
    expect(again).toBe('duplicate');
  } finally {
    setLanguageModel(undefined);
  }
  expect(asked).toBe(0);
  const after = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
  expect(after.body.analysis).toEqual(call.analysis);

  // Analysis is free: the call's only ledger entry is its call charge.
  const ledger = await api('GET', `/api/v1/organisations/${tenant.organisationId}/billing/ledger?limit=100`, {
    token: tenant.owner.token,
  });
  expect(
    (ledger.body.items as Json[])
      .filter((e) => String(e.source).includes(callId))
      .map((e) => [e.kind, e.usage_kind]),
  ).toEqual([['charge', 'call']]);
  // Additive: today's fields are all still there.
  expect(payload.data).toMatchObject({
    call_id: callId,
    summary: expect.any(String),
    sentiment: expect.any(Object),
  });
}, 240_000);

test('the model failing (500, then output that is not JSON): the rules answer, the webhook still goes once', async () => {
  const tenant = await newTenant({ paid: true });
  const hook = await startReceiver();
  receivers.push(hook);
  const { number } = await analysedAgent(tenant, hook);

  const erroring = await receiveCall(number, 'Hello there, please simulate an analysis error for this call.');
  const invalid = await receiveCall(number, 'Hello there, please simulate invalid analysis for this call.');
  for (const callId of [erroring, invalid]) {
    const call = await waitForCall(
      tenant,
      callId,
      (c) => c.status === 'completed' && c.analysis !== null,
      90_000,
    );
    expect(call.analysis).toEqual({
      source: 'rules',
      summary: expect.stringMatching(/^Inbound call from \+61491570177/),
      call_successful: expect.any(Boolean),
      user_sentiment: expect.stringMatching(/^(positive|neutral|negative)$/),
      custom: { budget: null, pre_approved: null, suburb: null, intent: null, email: null },
    });
    expect(call.analysis.summary).toBe((await theWebhook(tenant, hook, callId)).data.summary);
  }
}, 240_000);

test('bad analysis_fields are 422 and change nothing', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, { analysis_fields: FIELDS.slice(0, 1) });
  const bad: unknown[] = [
    [{ name: 'Budget', type: 'number', description: 'x' }],
    [{ name: '1budget', type: 'number', description: 'x' }],
    [{ name: 'a'.repeat(41), type: 'number', description: 'x' }],
    [FIELDS[0], FIELDS[0]],
    [{ name: 'intent', type: 'enum', description: 'x' }],
    [{ name: 'intent', type: 'string', description: 'x', enum_values: ['a'] }],
    [{ name: 'x', type: 'date', description: 'x' }],
    [{ name: 'x', type: 'string' }],
    Array.from({ length: 21 }, (_, i) => ({ name: `f${i}`, type: 'string', description: 'x' })),
  ];
  for (const fields of bad) {
    const res = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
      token: tenant.owner.token,
      body: { analysis_fields: fields },
    });
    expect(res.status).toBe(422);
    const created = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Bad', analysis_fields: fields },
    });
    expect(created.status).toBe(422);
  }
  const after = await api('GET', `${ws(tenant)}/agents/${agent.id}`, { token: tenant.owner.token });
  expect(after.body.analysis_fields).toEqual(FIELDS.slice(0, 1));
  // Twenty is allowed; success_criteria can be cleared with null.
  const twenty = Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, type: 'string', description: 'x' }));
  const ok = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
    token: tenant.owner.token,
    body: { analysis_fields: twenty, success_criteria: 'Books a viewing.' },
  });
  expect(ok.status).toBe(200);
  expect(ok.body.analysis_fields).toHaveLength(20);
  const cleared = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
    token: tenant.owner.token,
    body: { success_criteria: null },
  });
  expect(cleared.body.success_criteria).toBeNull();
});
