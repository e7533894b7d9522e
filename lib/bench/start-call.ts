import { dynamoClient } from '../../functions/platform/table.js';

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

export function summarise(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), mean };
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/**
 * Times every DynamoDB command of this process (the local stack runs the handlers here), so each
 * start-call's own round trips can be measured in the same run as its latency.
 */
export function recordDynamoSpans(): { name: string; startedAt: number; ms: number }[] {
  const spans: { name: string; startedAt: number; ms: number }[] = [];
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const startedAt = performance.now();
      try {
        return await next(args);
      } finally {
        spans.push({
          name: (context as { commandName?: string }).commandName ?? '?',
          startedAt,
          ms: performance.now() - startedAt,
        });
      }
    },
    { step: 'initialize', name: 'benchTiming' },
  );
  return spans;
}

/** The commands of start-call's happy path with an API key, in order (see functions/calling/start-call.ts). */
const START_CALL_COMMANDS = ['GetItemCommand', 'TransactGetItemsCommand', 'TransactWriteItemsCommand'];

/** Start-call through the local gateway with an API key, sequentially (warm), `samples` times. */
export async function measureStartCall(input: {
  baseUrl: string;
  workspaceId: string;
  agentId: string;
  apiKey: string;
  samples: number;
  spans: { name: string; startedAt: number; ms: number }[];
}): Promise<{ latency: LatencySummary; roundTrips: LatencySummary; statuses: Record<number, number> }> {
  const url = `${input.baseUrl}/api/v1/workspaces/${input.workspaceId}/agents/${input.agentId}/start-call`;
  const times: number[] = [];
  const roundTrips: number[] = [];
  const statuses: Record<number, number> = {};
  for (let i = 0; i < input.samples + 5; i += 1) {
    input.spans.length = 0;
    const windowStart = performance.now();
    const start = process.hrtime.bigint();
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${input.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to_phone: '+61491570156', parameters: { name: `Bench ${i}` } }),
    });
    await response.arrayBuffer();
    if (i >= 5) {
      times.push(ms(start));
      // This request's own round trips: the first of each of its commands that started in its window
      // (other work of the stack, such as the dispatcher, may interleave).
      const own = START_CALL_COMMANDS.map((name) =>
        input.spans.find((s) => s.name === name && s.startedAt >= windowStart),
      );
      if (own.every(Boolean)) roundTrips.push(own.reduce((sum, s) => sum + s!.ms, 0));
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }
  return { latency: summarise(times), roundTrips: summarise(roundTrips), statuses };
}
