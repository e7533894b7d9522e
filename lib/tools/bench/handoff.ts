import { join } from 'node:path';
import { handoffTool } from '../../../functions/conversation/engine/handoff.js';
import { emptyState, type ConversationSetup } from '../../../functions/conversation/engine/model.js';
import { inParallel } from '../../../functions/platform/parallel.js';
import { RelayClient } from '../../local/simulators/telephony/relay-client.js';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { summarise, type LatencySummary } from './load.js';
import { openBenchSession, streamed } from './relay-session.js';
import { startBenchStack } from './stack-process.js';

/**
 * A handoff (`npm run bench`, part `handoff`): the caller's line that makes the receptionist hand the
 * call to Sales → Sales's first text frame, in the same relay session. Its floor, started at the same
 * instant as each handoff (so both meet the same load): the same two model requests (the
 * receptionist's, which calls `handoff_to_agent`, then Sales's with the note), made directly one
 * after the other. The switch's own cost is the
 * difference: the target's agent read (one consistent GetItem), the closing write with the switch, the
 * language check. Budget: the service's part (p50 less the floor's p50) ≤ 20 ms.
 *
 * Calls are live `concurrency` at a time, in rounds: each round's sessions are opened and greeted
 * (untimed), the stack settles, then each caller says the line after a pause of `callerPauseMs` on
 * average (half to one and a half), as the conversation part's callers do: live calls whose handoffs
 * come when their callers ask, not ten switches in the same millisecond. `callerPauseMs` 0 says every
 * round's lines at once (for reference).
 */
export const HANDOFF_BUDGET = { serviceMs: 20 } as const;
const LINE = "I'd like to speak to sales about a listing";
const RECEPTION_PROMPT = 'You are the receptionist of Harbour Realty.';
const SALES_PROMPT = 'You are Sales at Harbour Realty. You know the listings.';
const SALES_DESCRIPTION = 'the caller wants to buy, asks about a listing or its price, or asks for sales';

export interface HandoffReport {
  calls: number;
  concurrency: number;
  callerPauseMs: number;
  handoff: LatencySummary;
  floor: LatencySummary;
  serviceMs: number;
  withinBudget: boolean;
}

export async function measureHandoff(options: {
  root: string;
  /** Calls, one timed handoff each. */
  calls: number;
  /** Calls live at once (and as many floor handoffs beside them). */
  concurrency: number;
  /** The caller's pause before the line, on average (0: every live call's line at once). */
  callerPauseMs: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<HandoffReport> {
  const { log } = options;
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-handoff`),
    logPath: join(options.root, '.local', 'bench-stack-handoff.log'),
    env: options.env,
  });
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const workspace = `/api/v1/workspaces/${demo.workspace_id}`;
    await owner.patch(workspace, { concurrent_call_limit: 1000 });
    const sales = await owner.post<{ id: string }>(`${workspace}/agents`, {
      name: 'Sales',
      prompt: SALES_PROMPT,
      greeting: 'Hi, Sales here.',
    });
    await owner.patch(`${workspace}/agents/${demo.agent_id}`, {
      name: 'Reception',
      prompt: RECEPTION_PROMPT,
      greeting: 'Hello.',
      tools: [],
      handoffs: [{ agent_id: sales.id, description: SALES_DESCRIPTION, context: 'full' }],
    });
    const relayUrl = stack.state.voice_relay_url;
    const signature = RelayClient.sign(stack.state.env.TELEPHONY_AUTH_TOKEN, relayUrl);
    const base = stack.state.env.LLM_BASE_URL;
    const tool = handoffTool(
      {
        handoffs: [{ agentId: sales.id, name: 'Sales', description: SALES_DESCRIPTION, context: 'full' }],
      } as ConversationSetup,
      emptyState(''),
    )!;

    const floorHandoff = async (): Promise<number> => {
      const started = performance.now();
      const first = await streamed(base, {
        model: 'simulator',
        messages: [
          { role: 'system', content: RECEPTION_PROMPT },
          { role: 'user', content: LINE },
        ],
        tools: [{ type: 'function', function: tool }],
      });
      const second = await streamed(base, {
        model: 'simulator',
        messages: [
          {
            role: 'system',
            content: `${SALES_PROMPT}\n\n## You are taking over this call\nYou are Sales.\nReception handed the caller to you.\nThe caller's last line: "${LINE}"`,
          },
          { role: 'user', content: LINE },
        ],
      });
      if (first.toolCall === undefined || second.firstText === undefined)
        throw new Error('the floor did not get a handoff and then words');
      return second.firstText - started;
    };

    /** A live call greeted, its handoff not yet asked for. */
    const liveCall = async () => {
      const relay = await openBenchSession({ owner, workspace, agentId: demo.agent_id, relayUrl, signature });
      // An untimed first turn: the session's setup is done (a line that came before it is said again).
      await relay.say('Hello, I have a question.').catch(() => relay.say('Hello, I have a question.'));
      return relay;
    };

    /** The call's timed handoff, with a floor handoff started at the same instant (both meet the same load). */
    const handOver = async (relay: RelayClient): Promise<[number, number]> => {
      const from = relay.frames.length;
      const handedOver = async (): Promise<number> => {
        const sentAt = performance.now();
        relay.send({ type: 'prompt', voicePrompt: LINE, lang: 'en-AU', last: true });
        // The target's first words: the first text frame with words after the receptionist's `last`.
        await relay.until((frames) => {
          const mine = frames.slice(from);
          const handed = mine.findIndex((f) => f.type === 'text' && f.last);
          return handed >= 0 && mine.slice(handed + 1).some((f) => f.type === 'text' && f.token)
            ? true
            : undefined;
        }, "the target's first words");
        return performance.now() - sentAt;
      };
      return (await Promise.all([handedOver(), floorHandoff()])) as [number, number];
    };

    /** The caller's pause before the line: `callerPauseMs` on average (half to one and a half). */
    const callerPause = () =>
      options.callerPauseMs > 0
        ? new Promise((resolve) => setTimeout(resolve, options.callerPauseMs * (0.5 + Math.random())))
        : undefined;

    /** `size` live calls: opened and greeted, the stack settled, then each handed over after its caller's pause. */
    const round = async (size: number): Promise<Array<[number, number]>> => {
      const live = await inParallel(Array.from({ length: size }), size, () => liveCall());
      await stack.settle();
      const pairs = await Promise.all(
        live.map(async (relay) => {
          await callerPause();
          return handOver(relay);
        }),
      );
      for (const relay of live) relay.close();
      return pairs;
    };

    log('handoff: warming up');
    await round(1);
    log(
      `handoff: ${options.calls} calls, ${options.concurrency} live at once, each caller asking for sales after ~${options.callerPauseMs} ms, beside a floor handoff started with it`,
    );
    const pairs: Array<[number, number]> = [];
    while (pairs.length < options.calls) {
      pairs.push(...(await round(Math.min(options.concurrency, options.calls - pairs.length))));
    }
    const handoffs = pairs.map(([handoff]) => handoff);
    const floors = pairs.map(([, floor]) => floor);
    const handoff = summarise(handoffs);
    const floor = summarise(floors);
    const serviceMs = handoff.p50 - floor.p50;
    return {
      calls: options.calls,
      concurrency: options.concurrency,
      callerPauseMs: options.callerPauseMs,
      handoff,
      floor,
      serviceMs,
      withinBudget: serviceMs <= HANDOFF_BUDGET.serviceMs,
    };
  } finally {
    await stack.stop();
  }
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

export function handoffTable(r: HandoffReport): string[] {
  return [
    `### a handoff: ${r.calls} calls, ${r.concurrency} live at once, each handed from the receptionist to Sales once after its caller's pause of ~${r.callerPauseMs} ms (the caller's line → the target's first text frame); each beside a floor started with it: the same two model requests, made directly`,
    '| measure | floor | handoff | | budget |',
    '|---|---:|---:|---:|---:|',
    `| p50 | ${f(r.floor.p50)} ms | ${f(r.handoff.p50)} ms | service's part ${f(r.serviceMs)} ms | ≤ ${HANDOFF_BUDGET.serviceMs} ms ${r.withinBudget ? '✓' : '✗'} |`,
    `| p99 | ${f(r.floor.p99)} ms | ${f(r.handoff.p99)} ms | ${f(r.handoff.p99 / r.floor.p99, 2)}x | |`,
  ];
}
