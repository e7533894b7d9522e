import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { inParallel } from '../../../functions/platform/parallel.js';
import { RelayClient } from '../../local/simulators/telephony/relay-client.js';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { summarise, type LatencySummary } from './load.js';
import { openBenchSession, streamed } from './relay-session.js';
import { startBenchStack } from './stack-process.js';

/**
 * A tool turn (`npm run bench`, part `tools`): the caller asks, the model calls the agent's function
 * tool, served by a local endpoint answering in a fixed 50 ms, the result goes back to the model and
 * its first words reach the caller — timed from the prompt sent to the first text frame. Its floor, in
 * the same run and at the same time: the same two model requests (the stack's model simulator, streamed
 * as the adapter asks) and the same 50 ms endpoint, called directly one after the other, by as many
 * floor "calls" as there are calls, at the same pace (the caller pauses ~1 s after each reply, as in
 * the conversation part): both meet the same load. Budget: the service's part of a
 * tool turn (turn p50 less the floor's p50) ≤ 15 ms, p99 ≤ 2x the floor's.
 */
export const TOOL_TURN_BUDGET = { serviceMs: 15, p99: 2 } as const;
const ENDPOINT_MS = 50;
const PROMPT = 'You are Ava from Harbour Realty. You book inspections.';
const LINE = 'Can you book an inspection for Saturday?';
const TOOL = {
  type: 'function',
  name: 'book_inspection',
  description: 'Book an inspection of a property for the caller.',
  parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
};

export interface ToolTurnReport {
  calls: number;
  turnsPerCall: number;
  callerPauseMs: number;
  turn: LatencySummary;
  floor: LatencySummary;
  serviceMs: number;
  p99Ratio: number;
  withinBudget: { serviceMs: boolean; p99: boolean };
}

/** The endpoint: answers every POST after ENDPOINT_MS with a JSON confirmation. */
async function slowEndpoint(): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () =>
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: 'Booked for Saturday.' }));
      }, ENDPOINT_MS),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/book`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function measureToolTurn(options: {
  root: string;
  calls: number;
  turns: number;
  /** The caller's pause between the agent's last word and the next line, on average (0: none). */
  callerPauseMs: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<ToolTurnReport> {
  const { log } = options;
  const endpoint = await slowEndpoint();
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-tools`),
    logPath: join(options.root, '.local', 'bench-stack-tools.log'),
    env: options.env,
  });
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const workspace = `/api/v1/workspaces/${demo.workspace_id}`;
    await owner.patch(workspace, { concurrent_call_limit: 1000 });
    await owner.patch(`${workspace}/agents/${demo.agent_id}`, {
      prompt: PROMPT,
      greeting: 'Hello.',
      tools: [{ ...TOOL, url: endpoint.url, timeout_ms: 5000 }],
    });
    const relayUrl = stack.state.voice_relay_url;
    const signature = RelayClient.sign(stack.state.env.TELEPHONY_AUTH_TOKEN, relayUrl);
    const base = stack.state.env.LLM_BASE_URL;

    const floorTurn = async (): Promise<number> => {
      const started = performance.now();
      const messages = [
        { role: 'system', content: PROMPT },
        { role: 'user', content: LINE },
      ];
      const tools = [{ type: 'function', function: TOOL }];
      const first = await streamed(base, { model: 'simulator', messages, tools });
      await fetch(endpoint.url, { method: 'POST', body: JSON.stringify({ arguments: { date: LINE } }) }).then(
        (r) => r.text(),
      );
      const second = await streamed(base, {
        model: 'simulator',
        tools,
        messages: [
          ...messages,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'c1',
                type: 'function',
                function: { name: TOOL.name, arguments: JSON.stringify({ date: LINE }) },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ message: 'Booked for Saturday.' }) },
        ],
      });
      if (first.toolCall === undefined || second.firstText === undefined)
        throw new Error('the floor did not get a tool call and then words');
      return second.firstText - started;
    };

    /** The caller's pause after the agent's last word: `callerPauseMs` on average (half to one and a half). */
    const callerPause = () =>
      options.callerPauseMs > 0
        ? new Promise((r) => setTimeout(r, options.callerPauseMs * (0.5 + Math.random())))
        : undefined;

    // Every call and floor call starts its timed turns together, once each call is set up and past its
    // first (untimed) turn: the calls' setup (start-call, dial, session) is not load the floor meets.
    let ready = 0;
    let release: () => void = () => undefined;
    const allReady = new Promise<void>((resolve) => (release = resolve));
    const setUp = async () => {
      ready += 1;
      if (ready === options.calls) release();
      await allReady;
    };

    /** A floor "call": `turns` floor turns with the same pauses, timed the same way. */
    const floorCall = async (): Promise<number[]> => {
      await allReady;
      const samples: number[] = [];
      for (let turn = 0; turn < options.turns; turn += 1) {
        samples.push(await floorTurn());
        await callerPause();
      }
      return samples;
    };

    const call = async (timed = true): Promise<number[]> => {
      const relay = await openBenchSession({ owner, workspace, agentId: demo.agent_id, relayUrl, signature });
      const samples: number[] = [];
      // The first turn may wait for the session's setup (frames run in parallel): it is not timed.
      for (let turn = 0; turn <= options.turns; turn += 1) {
        const from = relay.frames.length;
        const sentAt = performance.now();
        relay.send({ type: 'prompt', voicePrompt: LINE, lang: 'en-AU', last: true });
        await relay.until(
          (frames) => frames.slice(from).find((f) => f.type === 'text' && f.token),
          'the words after the tool',
        );
        if (turn > 0) samples.push(performance.now() - sentAt);
        await relay.reply(from);
        if (turn === 0 && timed) await setUp();
        else await callerPause();
      }
      relay.close();
      return samples;
    };

    log(`tool turn: warming up`);
    await call(false);
    await floorTurn();
    log(
      `tool turn: ${options.calls} calls × ${options.turns} turns (the caller pausing ~${options.callerPauseMs} ms), and as many floor calls at the same time`,
    );
    // The floor runs beside the turns, at the same concurrency and pace: both meet the same load.
    const [turnSamples, floorSamples] = await Promise.all([
      inParallel(Array.from({ length: options.calls }), options.calls, () => call()),
      inParallel(Array.from({ length: options.calls }), options.calls, () => floorCall()),
    ]);
    const turns = turnSamples.flat();
    const floors = floorSamples.flat();
    const turn = summarise(turns);
    const floor = summarise(floors);
    const serviceMs = turn.p50 - floor.p50;
    const p99Ratio = turn.p99 / floor.p99;
    return {
      calls: options.calls,
      turnsPerCall: options.turns,
      callerPauseMs: options.callerPauseMs,
      turn,
      floor,
      serviceMs,
      p99Ratio,
      withinBudget: {
        serviceMs: serviceMs <= TOOL_TURN_BUDGET.serviceMs,
        p99: p99Ratio <= TOOL_TURN_BUDGET.p99,
      },
    };
  } finally {
    await stack.stop();
    await endpoint.stop();
  }
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

export function toolTurnTable(r: ToolTurnReport): string[] {
  return [
    `### a tool turn: ${r.calls} calls at once, ${r.turnsPerCall} turns each, the caller pausing ~${r.callerPauseMs} ms after each reply; the floor beside them at the same concurrency and pace (prompt sent → the first words after a function tool answering in ${ENDPOINT_MS} ms)`,
    '| measure | floor (the same two model requests and the endpoint, called directly) | turn | | budget |',
    '|---|---:|---:|---:|---:|',
    `| p50 | ${f(r.floor.p50)} ms | ${f(r.turn.p50)} ms | service's part ${f(r.serviceMs)} ms | ≤ ${TOOL_TURN_BUDGET.serviceMs} ms ${r.withinBudget.serviceMs ? '✓' : '✗'} |`,
    `| p99 | ${f(r.floor.p99)} ms | ${f(r.turn.p99)} ms | ${f(r.p99Ratio, 2)}x | ≤ ${TOOL_TURN_BUDGET.p99}x ${r.withinBudget.p99 ? '✓' : '✗'} |`,
  ];
}
