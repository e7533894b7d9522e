import { runTurn } from '../../functions/conversation/engine/turn.js';
import { APOLOGY_MODEL, type ConversationOutput } from '../../functions/conversation/engine/ports.js';
import { emptyState, type ConversationSetup } from '../../functions/conversation/engine/model.js';
import { MemoryConversationStore } from '../../functions/conversation/engine/store.js';
import { onMetric, type MetricName } from '../../functions/platform/metrics.js';
import {
  LanguageModelError,
  type LanguageModelPort,
  type LlmStreamEvent,
} from '../../functions/providers/llm/port.js';

/**
 * What the model-errors and turn-latency alarms count (lib/cloud/monitoring.ts): the engine records a
 * `ModelRequests` for every model request, a `ModelErrors` for every turn whose model failed, and a
 * `TurnLatency` for every turn that spoke (the prompt → its first text frame). A model failing every
 * request for a while: each failure counted once, the caller hears the apology each time, and the call
 * goes on (the next turn, once the model is back, is answered).
 */

const setup: ConversationSetup = {
  workspaceId: 'ws_1',
  agentId: 'ag_1',
  callId: 'call_1',
  system: 'You are Ava.',
  greeting: 'Hi, this is Ava.',
  tools: [{ name: 'end_call', description: 'end', parameters: { type: 'object' } }],
  knowledgeBaseIds: [],
  startedAt: new Date().toISOString(),
  timeScale: 1,
};

const recorded: { name: MetricName; value: number; channel: string | undefined }[] = [];
onMetric((name, value, channel) => recorded.push({ name, value, channel }));
const count = (name: MetricName) => recorded.filter((m) => m.name === name).length;

/** A model that fails while `down()` says so (as Bedrock does when throttled or out), else answers. */
function flakyModel(down: () => boolean): LanguageModelPort & { requests: number } {
  const model = {
    provider: 'bedrock' as const,
    model: 'flaky',
    requests: 0,
    async *stream(): AsyncGenerator<LlmStreamEvent> {
      model.requests += 1;
      await Promise.resolve();
      if (down()) throw new LanguageModelError('Too many requests', 'unavailable');
      yield { type: 'text', text: 'Open homes are on Saturdays.' };
      yield { type: 'end', stopReason: 'end_turn' };
    },
    complete: () => Promise.reject(new Error('not used')),
  };
  return model;
}

function recorder(): ConversationOutput & { lines: string[]; ends: unknown[] } {
  const lines: string[] = [];
  const ends: unknown[] = [];
  let current = '';
  return {
    lines,
    ends,
    text: (token, last) => {
      current += token;
      if (last) {
        lines.push(current);
        current = '';
      }
      return Promise.resolve();
    },
    end: (end) => {
      ends.push(end);
      return Promise.resolve();
    },
  };
}

test('a model failing every request: each failure counted once, the apology heard each time, the call goes on', async () => {
  recorded.length = 0;
  const store = new MemoryConversationStore(setup, emptyState(setup.greeting));
  let down = true;
  const model = flakyModel(() => down);
  const out = recorder();
  const deps = {
    store,
    model,
    output: out,
    runTool: () => Promise.reject(new Error('no tools')),
    channel: 'phone' as const,
  };

  const FAILING_TURNS = 12;
  for (let i = 0; i < FAILING_TURNS; i += 1) {
    const result = await runTurn(deps, { kind: 'prompt', text: `Hello? (${i})` });
    expect(result.spoken).toBe(APOLOGY_MODEL);
  }
  down = false;
  const answered = await runTurn(deps, { kind: 'prompt', text: 'When are open homes?' });
  expect(answered.spoken).toBe('Open homes are on Saturdays.');

  expect(out.lines).toEqual([
    ...Array<string>(FAILING_TURNS).fill(APOLOGY_MODEL),
    'Open homes are on Saturdays.',
  ]);
  expect(out.ends).toEqual([]);
  expect(model.requests).toBe(FAILING_TURNS + 1);
  // The alarm's rate: errors over requests, each counted once (with the call's channel).
  expect(count('ModelErrors')).toBe(FAILING_TURNS);
  expect(count('ModelRequests')).toBe(FAILING_TURNS + 1);
  expect(
    recorded.filter((m) => m.name === 'ModelErrors').every((m) => m.value === 1 && m.channel === 'phone'),
  ).toBe(true);
  // Every turn spoke (the apology is a reply), so every turn has its latency.
  expect(count('TurnLatency')).toBe(FAILING_TURNS + 1);
  expect(recorded.filter((m) => m.name === 'TurnLatency').every((m) => m.value >= 0)).toBe(true);
  const { state } = await store.load();
  expect(state.incidents.map((incident) => incident.kind)).toEqual(Array(FAILING_TURNS).fill('model_error'));
  expect(state.ended).toBeUndefined();
});
