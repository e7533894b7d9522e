import { inParallel } from '../../../functions/platform/parallel.js';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';
import { summarise, type LatencySummary } from './load.js';
import { RELAY_FLOOR_PATH } from './relay-floor-handler.js';
import { startBenchStack } from './stack-process.js';

/**
 * The voice runtime's budgets (issue 23; `BENCH_PARTS=conversation npm run bench`), on a stack of its
 * own with the model simulator (answers at once, a word a chunk):
 *
 * 1. Latency per turn: `concurrentCalls` (20) live calls at once, `turns` each, `prompt` frame sent →
 *    first `text` frame received. A call's caller pauses after each reply (`callerPauseMs`, 1 s on
 *    average, half to one and a half: less than the reply takes to be spoken, so the load is above
 *    that of 20 real calls); one more round of each with no pause at all is reported beside it, for
 *    reference (every call's next line the moment its reply ends: the load of far more calls). Taking
 *    turns in `rounds` with its floor: the same WebSocket round trip through the same local relay
 *    gateway (the stack's own, at `/bench-floor`, in the same process as the turns,
 *    lib/tools/bench/relay-floor-handler.ts: one GetItem, one PutItem on the stack's table, one streamed
 *    request to the stack's model simulator, its first chunk forwarded with PostToConnection).
 *    Budgets: p50 ≤ 1.5x the floor's, p99 ≤ 2x, and the service's own part (the turn less the model's
 *    time to first token) ≤ 50 ms at p50, from the call detail's `latency.service_ms` and from the
 *    turn's p50 less the floor's model time to first token.
 * 2. Concurrency: `sessions` (100) relay sessions at once, `sessionTurns` (10) turns each, each call's
 *    agent prompt filled with its own caller code: every prompt answered once (one `last` each), every
 *    reply its own call's, every call's transcript (the call detail after hang-up) exactly its lines.
 *
 * Live calls: start-call to the simulator's external scenario (+61491570116), which answers and leaves
 * the relay session to the bench (test/e2e/conversation/relay-client.ts does the same).
 */

export const CONVERSATION_BUDGET = { p50: 1.5, p99: 2, serviceMs: 50 } as const;
const EXTERNAL_RELAY_NUMBER = '+61491570116';
const PROMPT = 'You are calling {{name}}. Your caller code is {{name}}.';
/** Spoken by the provider (`welcomeGreeting`), kept as the transcript's first line. */
const GREETING = 'Hello {{name}}.';
const TURN_TIMEOUT_MS = 30_000;
/** Calls placed at once while the sessions are opened (before any turn is timed). */
const DIAL_WIDTH = 5;

interface TurnsAgainstFloor {
  turn: LatencySummary;
  floor: LatencySummary;
  /** The floor's model time to first token (request → first chunk, in the floor's handler). */
  floorModelMs: LatencySummary;
  ratios: { p50: number; p99: number };
  /** The turn's p50 less the floor's model p50. */
  serviceMsFromFloor: number;
  /** The floor's own part: its p50 less its model p50 (the least any turn adds to the model's time). */
  floorOwnMs: number;
}

export interface ConversationReport {
  latency: TurnsAgainstFloor & {
    concurrentCalls: number;
    turnsPerCall: number;
    rounds: number;
    /** The caller's pause between the agent's last word and the next line, on average. */
    callerPauseMs: number;
    /** Median over the calls of the call detail's `latency.service_ms.p50` (and model, total). */
    callDetail: { serviceMsP50: number; modelMsP50: number; totalMsP50: number; calls: number };
    /** One more round of each with no pause at all (every line the moment the reply ends): for reference. */
    backToBack: TurnsAgainstFloor & { calls: number };
    withinBudget: { p50: boolean; p99: boolean; serviceMs: boolean };
    budget: typeof CONVERSATION_BUDGET;
  };
  concurrency: {
    sessions: number;
    turnsPerSession: number;
    prompts: number;
    answered: number;
    answeredTwice: number;
    unanswered: number;
    wrongCall: number;
    strayFrames: number;
    /** Calls (both parts) that failed to dial and were placed again: not sessions, not counted. */
    failedDials: number;
    /** DynamoDB requests of the ConversationRelay function per turn, by command. */
    dynamodbPerTurn: Record<string, number>;
    transcriptsExact: number;
    transcriptsWrong: number;
    seconds: number;
    examples: string[];
  };
}

interface Frame {
  type?: string;
  token?: string;
  last?: boolean;
  model_ms?: number;
}

/** A turn as the client saw it: prompt sent → first text frame, the reply, the `last`s it got. */
interface Turn {
  firstTextMs: number;
  reply: string;
  modelMs?: number;
}

/**
 * A minimal ConversationRelay client: one reply awaited at a time; text frames that arrive while no
 * reply is awaited, and `last`s after a reply's first, are counted as stray.
 */
class BenchRelay {
  stray = 0;
  lasts = 0;
  private pending:
    | { started: bigint; first?: number; text: string; modelMs?: number; done: (turn: Turn) => void }
    | undefined;
  private closedWaiters: (() => void)[] = [];
  closed = false;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.onFrame(JSON.parse(String(data)) as Frame));
    socket.on('close', () => {
      this.closed = true;
      for (const waiter of this.closedWaiters.splice(0)) waiter();
    });
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<BenchRelay> {
    return new Promise((resolveOpen, reject) => {
      const socket = new WebSocket(url, { headers });
      socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`relay refused: ${res.statusCode}`)),
      );
      socket.once('error', reject);
      socket.once('open', () => resolveOpen(new BenchRelay(socket)));
    });
  }

  private onFrame(frame: Frame): void {
    if (frame.type !== 'text') return;
    if (frame.last) this.lasts += 1;
    const turn = this.pending;
    if (!turn) {
      this.stray += 1;
      return;
    }
    turn.first ??= Number(process.hrtime.bigint() - turn.started) / 1e6;
    turn.text += frame.token ?? '';
    if (frame.model_ms !== undefined) turn.modelMs = frame.model_ms;
    if (frame.last) {
      this.pending = undefined;
      turn.done({ firstTextMs: turn.first, reply: turn.text.trim(), modelMs: turn.modelMs });
    }
  }

  say(line: string, extra: Record<string, unknown> = {}): Promise<Turn> {
    return this.expect(() =>
      this.socket.send(
        JSON.stringify({ type: 'prompt', voicePrompt: line, lang: 'en-AU', last: true, ...extra }),
      ),
    );
  }

  private expect(send: () => void): Promise<Turn> {
    if (this.pending) throw new Error('a reply is already awaited');
    return new Promise((resolveTurn, reject) => {
      const timer = setTimeout(() => reject(new Error('no reply within the turn timeout')), TURN_TIMEOUT_MS);
      this.pending = {
        started: process.hrtime.bigint(),
        text: '',
        done: (turn) => {
          clearTimeout(timer);
          resolveTurn(turn);
        },
      };
      send();
    });
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolveClosed) => {
      this.closedWaiters.push(resolveClosed);
      this.socket.close(1000);
    });
  }
}

interface CallDetail {
  status: string;
  provider_call_id?: string | null;
  transcript?: { role: string; text: string }[];
  latency?: {
    turns: number;
    service_ms: { p50: number | null };
    model_ms: { p50: number | null };
    total_ms: { p50: number | null };
  };
}

const until = async <T>(check: () => Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

const median = (values: number[]) => summarise(values).p50;
const callerName = (index: number) => `Caller ${index}`;
const expectedReply = (index: number) => `Your caller code is ${callerName(index)}.`;
const lineFor = (index: number, turn: number) =>
  `This is ${callerName(index)}, question ${turn + 1}: what is my caller code?`;

export async function measureConversation(options: {
  root: string;
  concurrentCalls: number;
  turns: number;
  rounds: number;
  /** The caller's pause between the agent's last word and the next line, on average (0: none). */
  callerPauseMs: number;
  sessions: number;
  sessionTurns: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<ConversationReport> {
  const { log } = options;
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-conversation`),
    logPath: join(options.root, '.local', 'bench-stack-conversation.log'),
    // The floor's handler is served by the stack's own relay gateway, beside the turns.
    env: { ...options.env, LOCAL_BENCH_RELAY_FLOOR: '1' },
  });
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const workspace = `/api/v1/workspaces/${demo.workspace_id}`;
    await owner.patch(workspace, { concurrent_call_limit: 1000 });
    await owner.patch(`${workspace}/agents/${demo.agent_id}`, { prompt: PROMPT, greeting: GREETING });
    const relayUrl = stack.state.voice_relay_url;
    const signature = signTwilioRequest(stack.state.env.TELEPHONY_AUTH_TOKEN, relayUrl, {});

    const detail = (callId: string) => owner.get<CallDetail>(`${workspace}/calls/${callId}`);

    /** A live call whose relay session is the bench's: opened, set up, its greeting heard. */
    const answered = async (index: number) => {
      const started = await owner.post<{ id: string }>(`${workspace}/agents/${demo.agent_id}/start-call`, {
        to_phone: EXTERNAL_RELAY_NUMBER,
        parameters: { name: callerName(index) },
      });
      const providerCallId = await until(
        async () => {
          const call = await detail(started.id);
          if (call.status === 'failed') return null;
          return call.provider_call_id && call.status === 'inprogress' ? call.provider_call_id : undefined;
        },
        `call ${started.id} to be answered`,
        60_000,
      );
      return providerCallId ? { started, providerCallId } : undefined;
    };
    /** Calls that failed to dial (the telephony simulator too slow to answer on a loaded machine). */
    let failedDials = 0;
    const liveSession = async (index: number) => {
      let call = await answered(index);
      while (!call) {
        failedDials += 1;
        if (failedDials > 50) throw new Error('too many calls failed to dial');
        call = await answered(index);
      }
      const { started, providerCallId } = call;
      const relay = await BenchRelay.connect(relayUrl, { [SIGNATURE_HEADER]: signature });
      relay.send({
        type: 'setup',
        sessionId: `VX${String(index).padStart(32, '0')}`,
        callSid: providerCallId,
        from: '+61491570199',
        to: demo.phone_number,
        direction: 'outbound-api',
        customParameters: { call_id: started.id, workspace_id: demo.workspace_id },
      });
      return { index, callId: started.id, relay };
    };
    type Live = Awaited<ReturnType<typeof liveSession>>;

    /** Hangs up and waits for each call's conversation to be recorded. */
    const hangUpAll = async (calls: Live[], turns: number) => {
      await Promise.all(calls.map((call) => call.relay.close()));
      return inParallel(calls, 10, (call) =>
        until(
          async () => {
            const c = await detail(call.callId);
            return c.status === 'completed' && (c.latency?.turns ?? 0) >= turns ? c : undefined;
          },
          `call ${call.callId}'s conversation to be recorded`,
          120_000,
        ),
      );
    };

    // ── 1. Latency per turn against the floor, taking turns ──
    const floorUrl = new URL(`/${RELAY_FLOOR_PATH}`, relayUrl).href;
    const floorItem = { pk: `WS#${demo.workspace_id}`, sk: `AGENT#${demo.agent_id}` };

    const n = options.concurrentCalls;
    /** What a round measured: first-frame times of turns and of the floor, the floor's model times. */
    interface Sink {
      turn: number[];
      floor: number[];
      floorModel: number[];
      details: CallDetail[];
    }
    const newSink = (): Sink => ({ turn: [], floor: [], floorModel: [], details: [] });
    const paced = newSink();
    const backToBack = newSink();
    /** The caller's pause after the agent's last word: `pauseMs` on average (half to one and a half). */
    const callerPause = (pauseMs: number) =>
      pauseMs > 0 ? new Promise((r) => setTimeout(r, pauseMs * (0.5 + Math.random()))) : undefined;

    // Each round starts on a quiet stack: the last round's post-call work (analysis, webhooks) done.
    const floorRound = async (sink: Sink | undefined, pauseMs: number) => {
      await stack.settle();
      await Promise.all(
        Array.from({ length: n }, async (_, index) => {
          const relay = await BenchRelay.connect(floorUrl);
          const system = PROMPT.replaceAll('{{name}}', callerName(index));
          await relay.say('Hello.', { system, item: floorItem });
          for (let t = 0; t < options.turns; t += 1) {
            await callerPause(pauseMs);
            const turn = await relay.say(lineFor(index, t), { system, item: floorItem });
            sink?.floor.push(turn.firstTextMs);
            if (turn.modelMs !== undefined) sink?.floorModel.push(turn.modelMs);
          }
          await relay.close();
        }),
      );
    };
    const conversationRound = async (sink: Sink | undefined, pauseMs: number) => {
      await stack.settle();
      const calls = await inParallel(
        Array.from({ length: n }, (_, i) => i),
        DIAL_WIDTH,
        liveSession,
      );
      await Promise.all(
        calls.map(async (call) => {
          // Not measured: the first prompt may wait for the session's setup (each frame is its own invocation).
          await call.relay.say('Hello.');
          for (let t = 0; t < options.turns; t += 1) {
            await callerPause(pauseMs);
            const turn = await call.relay.say(lineFor(call.index, t));
            sink?.turn.push(turn.firstTextMs);
          }
        }),
      );
      const ended = await hangUpAll(calls, options.turns);
      sink?.details.push(...ended);
    };

    const pauseMs = options.callerPauseMs;
    log(`conversation latency: warming up (${n} calls, ${options.turns} turns, and the floor)`);
    await floorRound(undefined, 0);
    await conversationRound(undefined, 0);
    for (let round = 0; round < options.rounds; round += 1) {
      log(`conversation latency: round ${round + 1} of ${options.rounds} (the caller pauses ~${pauseMs} ms)`);
      await floorRound(paced, pauseMs);
      await conversationRound(paced, pauseMs);
    }
    log('conversation latency: back to back (no pause), for reference');
    await floorRound(backToBack, 0);
    await conversationRound(backToBack, 0);

    const summary = (sink: Sink): TurnsAgainstFloor => {
      const turn = summarise(sink.turn);
      const floor = summarise(sink.floor);
      const floorModelMs = summarise(sink.floorModel);
      return {
        turn,
        floor,
        floorModelMs,
        ratios: { p50: turn.p50 / floor.p50, p99: turn.p99 / floor.p99 },
        serviceMsFromFloor: turn.p50 - floorModelMs.p50,
        floorOwnMs: floor.p50 - floorModelMs.p50,
      };
    };
    const details = paced.details;
    const callDetail = {
      serviceMsP50: median(details.map((d) => d.latency?.service_ms.p50 ?? NaN)),
      modelMsP50: median(details.map((d) => d.latency?.model_ms.p50 ?? NaN)),
      totalMsP50: median(details.map((d) => d.latency?.total_ms.p50 ?? NaN)),
      calls: details.length,
    };
    const measured = summary(paced);
    const { ratios, serviceMsFromFloor } = measured;
    const latency = {
      concurrentCalls: n,
      turnsPerCall: options.turns,
      rounds: options.rounds,
      callerPauseMs: pauseMs,
      ...measured,
      callDetail,
      backToBack: { ...summary(backToBack), calls: backToBack.details.length },
      withinBudget: {
        p50: ratios.p50 <= CONVERSATION_BUDGET.p50,
        p99: ratios.p99 <= CONVERSATION_BUDGET.p99,
        serviceMs:
          callDetail.serviceMsP50 <= CONVERSATION_BUDGET.serviceMs &&
          serviceMsFromFloor <= CONVERSATION_BUDGET.serviceMs,
      },
      budget: CONVERSATION_BUDGET,
    };

    // ── 2. Concurrency: every prompt answered once, by its own call, transcripts exact ──
    log(`conversation concurrency: ${options.sessions} sessions of ${options.sessionTurns} turns`);
    const startedAt = Date.now();
    const sessions = await inParallel(
      Array.from({ length: options.sessions }, (_, i) => i),
      DIAL_WIDTH,
      liveSession,
    );
    // Between the sessions' setup and their hang-up only turns run: the relay function's requests per turn.
    const relayRequests = async () =>
      (await stack.metrics()).dynamodb_by_function.ConversationRelay ?? ({} as Record<string, number>);
    const requestsBefore = await relayRequests();
    const examples: string[] = [];
    const counts = { answered: 0, answeredTwice: 0, unanswered: 0, wrongCall: 0 };
    await Promise.all(
      sessions.map(async (session) => {
        for (let t = 0; t < options.sessionTurns; t += 1) {
          const lastsBefore = session.relay.lasts;
          let reply: Turn;
          try {
            reply = await session.relay.say(lineFor(session.index, t));
          } catch {
            counts.unanswered += 1;
            continue;
          }
          counts.answered += 1;
          if (session.relay.lasts - lastsBefore > 1) counts.answeredTwice += 1;
          if (reply.reply !== expectedReply(session.index)) {
            counts.wrongCall += 1;
            if (examples.length < 5) examples.push(`${callerName(session.index)} got "${reply.reply}"`);
          }
        }
      }),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    const strayFrames = sessions.reduce((sum, s) => sum + s.relay.stray, 0);
    const requestsAfter = await relayRequests();
    const prompts = options.sessions * options.sessionTurns;
    const dynamodbPerTurn = Object.fromEntries(
      Object.entries(requestsAfter).map(([command, n]) => [
        command,
        Math.round(((n - (requestsBefore[command] ?? 0)) / prompts) * 100) / 100,
      ]),
    );
    const recorded = await hangUpAll(sessions, options.sessionTurns);
    let transcriptsExact = 0;
    recorded.forEach((call, i) => {
      const index = sessions[i].index;
      const expected = [
        `agent: ${GREETING.replace('{{name}}', callerName(index))}`,
        ...Array.from({ length: options.sessionTurns }, (_, t) => [
          `user: ${lineFor(index, t)}`,
          `agent: ${expectedReply(index)}`,
        ]).flat(),
      ];
      const actual = (call.transcript ?? []).map((entry) => `${entry.role}: ${entry.text}`);
      if (JSON.stringify(actual) === JSON.stringify(expected)) transcriptsExact += 1;
      else if (examples.length < 5)
        examples.push(`${callerName(index)}'s transcript: ${JSON.stringify(actual).slice(0, 300)}`);
    });

    return {
      latency,
      concurrency: {
        sessions: options.sessions,
        turnsPerSession: options.sessionTurns,
        prompts,
        failedDials,
        ...counts,
        dynamodbPerTurn,
        strayFrames,
        transcriptsExact,
        transcriptsWrong: recorded.length - transcriptsExact,
        seconds,
        examples,
      },
    };
  } finally {
    await stack.stop();
  }
}

const f = (n: number, digits = 1) => n.toFixed(digits);
const mark = (ok: boolean) => (ok ? 'within' : '**OVER**');

export function conversationTable(r: ConversationReport): string[] {
  const { latency: l, concurrency: c } = r;
  return [
    `### latency per turn: ${l.concurrentCalls} calls at once, ${l.turnsPerCall} turns each, the caller pausing ~${l.callerPauseMs} ms after each reply, ${l.rounds} rounds (prompt sent → first text frame)`,
    '| measure | floor (same gateway code, GetItem + PutItem + model stream + PostToConnection) | turn | ratio | budget | |',
    '|---|---:|---:|---:|---:|---|',
    `| p50 | ${f(l.floor.p50)} ms | ${f(l.turn.p50)} ms | ${f(l.ratios.p50, 2)}x | ≤ ${l.budget.p50}x | ${mark(l.withinBudget.p50)} |`,
    `| p99 | ${f(l.floor.p99)} ms | ${f(l.turn.p99)} ms | ${f(l.ratios.p99, 2)}x | ≤ ${l.budget.p99}x | ${mark(l.withinBudget.p99)} |`,
    `| p90 / mean | ${f(l.floor.p90)} / ${f(l.floor.mean)} ms | ${f(l.turn.p90)} / ${f(l.turn.mean)} ms | | | |`,
    `| service's own part, p50 | model's first token ${f(l.floorModelMs.p50)} ms (p99 ${f(l.floorModelMs.p99)}); the floor's own part ${f(l.floorOwnMs)} ms | ${f(l.serviceMsFromFloor)} ms (turn p50 less the floor's model p50); call detail service_ms ${f(l.callDetail.serviceMsP50)} ms (model_ms ${f(l.callDetail.modelMsP50)}, total_ms ${f(l.callDetail.totalMsP50)}; median of ${l.callDetail.calls} calls) | | ≤ ${l.budget.serviceMs} ms | ${mark(l.withinBudget.serviceMs)} |`,
    `| back to back (no pause; reference, not the budget) | p50 ${f(l.backToBack.floor.p50)} ms, p99 ${f(l.backToBack.floor.p99)} ms; model's first token ${f(l.backToBack.floorModelMs.p50)} ms; own part ${f(l.backToBack.floorOwnMs)} ms | p50 ${f(l.backToBack.turn.p50)} ms, p99 ${f(l.backToBack.turn.p99)} ms; own part ${f(l.backToBack.serviceMsFromFloor)} ms | ${f(l.backToBack.ratios.p50, 2)}x / ${f(l.backToBack.ratios.p99, 2)}x | | |`,
    '',
    `### concurrency: ${c.sessions} relay sessions at once, ${c.turnsPerSession} turns each (${f(c.seconds)} s)`,
    '| prompts | answered | answered twice | unanswered | reply of another call | stray text frames | transcripts exact | transcripts wrong |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${c.prompts} | ${c.answered} | ${c.answeredTwice} | ${c.unanswered} | ${c.wrongCall} | ${c.strayFrames} | ${c.transcriptsExact} | ${c.transcriptsWrong} |`,
    `- calls that failed to dial (the telephony simulator did not answer in time) and were placed again: ${c.failedDials}`,
    `- the relay function's DynamoDB requests per turn: ${Object.entries(c.dynamodbPerTurn)
      .map(([command, n]) => `${command} ${n}`)
      .join(', ')}`,
    ...c.examples.map((e) => `- ${e}`),
  ];
}

/** The turn on the local path (a process cache) beside the cloud's (every frame a fresh container). */
export function cloudPathTable(local: ConversationReport, cloud: ConversationReport): string[] {
  const perTurn = (r: ConversationReport) =>
    Object.entries(r.concurrency.dynamodbPerTurn)
      .map(([command, n]) => `${command} ${n}`)
      .join(', ');
  const row = (name: string, r: ConversationReport) =>
    `| ${name} | ${f(r.latency.floor.p50)} / ${f(r.latency.floor.p99)} ms | ${f(r.latency.turn.p50)} / ${f(r.latency.turn.p99)} ms | ${f(r.latency.ratios.p50, 2)}x / ${f(r.latency.ratios.p99, 2)}x | ${f(r.latency.serviceMsFromFloor)} ms | ${perTurn(r)} |`;
  return [
    `### the turn's cloud path: every frame as on a fresh Lambda container (CONVERSATION_PROCESS_CACHE=off), beside the local path`,
    "| path | floor p50 / p99 | turn p50 / p99 | ratio p50 / p99 | service's own part p50 | DynamoDB requests per turn |",
    '|---|---:|---:|---:|---:|---|',
    row('local (process cache)', local),
    row('cloud (no process cache)', cloud),
  ];
}
