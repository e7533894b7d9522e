/**
 * `npm run cli -- call talk` (lib/tools/cli/talk.ts): a person holds the call in real time, so it is
 * billed by its wall-clock duration and its transcript's offsets are real seconds. Only the calls the
 * telephony simulator plays out itself run at SIMULATOR_TIME_SCALE (the test stack's is 20 or more).
 */
import { PassThrough } from 'node:stream';
import { talk } from '../../../lib/tools/cli/talk.js';
import { readStackState } from '../../../lib/local/state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { fullLedger } from '../billing/fixtures.js';
import { createAgent, readyToCall, waitForCall, ws } from '../calling/fixtures.js';
import { api } from '../../helpers/http.js';

/** The person on the line stays about this long (the scenario, not a wait for the service). */
const HELD_MS = 2_000;

test('a call held through call talk is billed by its wall-clock seconds, its transcript in real seconds', async () => {
  const { tenant, number } = await readyToCall();
  const state = readStackState()!;
  expect(Number(state.env.SIMULATOR_TIME_SCALE ?? 20)).toBeGreaterThan(1);
  const input = new PassThrough();
  const output = new PassThrough();
  let heard = '';
  output.on('data', (chunk: Buffer) => (heard += chunk.toString('utf8')));
  const began = Date.now();
  const talking = talk(
    state,
    { from: '+61491570199', to: number.phone_number as string },
    { input, output, log: () => undefined },
  );
  input.write('Hello, is the house on Harbour Street still for sale?\n');
  // The agent answered the line (a second `agent>` line, ended), and the person has been on the line
  // for about two seconds: then they hang up (Ctrl-D).
  await waitFor(
    () => (heard.slice(0, heard.lastIndexOf('\n') + 1).match(/^agent> .+$/gm) ?? []).length >= 2,
    {
      what: () => `the agent's greeting and reply; heard: ${heard}`,
    },
  );
  await waitFor(() => Date.now() - began >= HELD_MS, { what: 'the person to have held the call' });
  input.end();
  const { callId, ended } = await talking;
  const wallSeconds = (Date.now() - began) / 1000;
  expect(ended).toBe('caller hung up');

  const call = await waitForCall(
    tenant,
    callId!,
    (c) => c.status === 'completed' && c.credits !== null,
    30_000,
  );
  // Real seconds (at most the wall-clock time the test held it), not 20 times as many.
  expect(call.duration_seconds).toBeGreaterThanOrEqual(1);
  expect(call.duration_seconds).toBeLessThanOrEqual(Math.ceil(wallSeconds) + 1);
  for (const turn of call.transcript as { offset_seconds: number }[])
    expect(turn.offset_seconds).toBeLessThanOrEqual(Math.ceil(wallSeconds));
  expect(call.transcript.length).toBeGreaterThanOrEqual(2);

  // Billed once, for those seconds (20 credits a minute).
  await waitForQuiescence();
  const ledger = await fullLedger(tenant.organisationId, tenant.owner.token);
  const charges = ledger.filter((entry) => entry.source === `${callId}:call`);
  expect(charges).toHaveLength(1);
  expect(charges[0].quantity).toBe(call.duration_seconds);
});

test('a call talk session the agent ends with a warm transfer ends too: the person talks 30 s and hangs up, the call completes and is billed for what was held', async () => {
  const target = '+61491570156';
  const { tenant, number } = await readyToCall({
    transfer: { phone_number: target, mode: 'warm' },
  });
  const state = readStackState()!;
  const input = new PassThrough();
  const output = new PassThrough();
  const began = Date.now();
  const talking = talk(
    state,
    { from: '+61491570199', to: number.phone_number as string },
    { input, output, log: () => undefined },
  );
  input.write('Can I speak to a real person please?\n');
  const { callId, ended } = await talking;
  expect(ended).toContain(`the agent transferred the call to ${target}`);
  input.end();

  const call = await waitForCall(
    tenant,
    callId!,
    (c) => c.status === 'completed' && c.credits !== null,
    90_000,
  );
  const wallSeconds = (Date.now() - began) / 1000;
  expect(call.transferred_to).toBe(target);
  // What was held: the talk with the agent, then the person's 30 s — never the call's maximum duration.
  expect(call.duration_seconds).toBeGreaterThanOrEqual(30);
  expect(call.duration_seconds).toBeLessThanOrEqual(Math.ceil(wallSeconds) + 1);
  await waitForQuiescence();
  const ledger = await fullLedger(tenant.organisationId, tenant.owner.token);
  const charges = ledger.filter((entry) => entry.source === `${callId}:call`);
  expect(charges).toHaveLength(1);
  expect(charges[0].quantity).toBe(call.duration_seconds);
}, 120_000);

test("lines piped in are said one at a time, each once the agent has finished, a handoff's target included", async () => {
  const {
    tenant,
    agent: reception,
    number,
  } = await readyToCall({
    name: 'Reception',
    prompt: 'You are the receptionist of Harbour Realty.',
    greeting: 'Hi, Harbour Realty.',
  });
  const sales = await createAgent(tenant, {
    name: 'Sales',
    prompt: 'You are Sales at Harbour Realty.',
    greeting: 'Hi, Sales here.',
  });
  const set = await api('PATCH', `${ws(tenant)}/agents/${reception.id}`, {
    token: tenant.owner.token,
    body: {
      handoffs: [{ agent_id: sales.id, description: 'the caller asks for sales', context: 'full' }],
    },
  });
  expect(set.status).toBe(200);
  const input = new PassThrough();
  const output = new PassThrough();
  let heard = '';
  output.on('data', (chunk: Buffer) => (heard += chunk.toString('utf8')));
  // Written at once, as `printf '…\n…\n' | call talk` gives them.
  input.end("I'd like to speak to sales about a listing\nIs it still for sale?\ngoodbye\n");
  const { callId, ended } = await talk(
    state(),
    { from: '+61491570199', to: number.phone_number as string },
    { input, output, log: () => undefined },
  );
  expect(ended).toBe('the agent ended the call');
  const lines = heard.trimEnd().split('\n');
  // Every reply on a line of its own: the greeting, the hand-over, Sales's first words, its answer, goodbye.
  expect(lines.every((line) => /^agent> \S/.test(line))).toBe(true);
  expect(lines).toHaveLength(5);
  expect(lines[1]).toBe('agent> Let me put you through to Sales.');
  expect(lines[2]).toContain("I'd like to speak to sales about a listing");
  const call = await waitForCall(tenant, callId!, (c) => c.status === 'completed', 30_000);
  const said = (call.transcript as { role: string; agent_id?: string }[]).filter((t) => t.role === 'agent');
  expect(said.map((t) => t.agent_id)).toEqual([reception.id, reception.id, sales.id, sales.id, sales.id]);
}, 120_000);

function state() {
  return readStackState()!;
}
