import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

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

/** Latency of one DynamoDB round trip to the same table (a GetItem of a missing key). */
export async function measureRoundTrip(tableName: string, samples: number): Promise<LatencySummary> {
  const client = new DynamoDBClient({});
  const times: number[] = [];
  for (let i = 0; i < samples + 10; i += 1) {
    const start = process.hrtime.bigint();
    await client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'BENCH' }, sk: { S: String(i) } } }));
    if (i >= 10) times.push(ms(start));
  }
  client.destroy();
  return summarise(times);
}

/** Start-call through the local gateway with an API key, sequentially (warm), `samples` times. */
export async function measureStartCall(input: {
  baseUrl: string;
  workspaceId: string;
  agentId: string;
  apiKey: string;
  samples: number;
}): Promise<{ latency: LatencySummary; statuses: Record<number, number> }> {
  const url = `${input.baseUrl}/api/v1/workspaces/${input.workspaceId}/agents/${input.agentId}/start-call`;
  const times: number[] = [];
  const statuses: Record<number, number> = {};
  for (let i = 0; i < input.samples + 5; i += 1) {
    const start = process.hrtime.bigint();
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${input.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to_phone: '+61491570156', parameters: { name: `Bench ${i}` } }),
    });
    await response.arrayBuffer();
    if (i >= 5) {
      times.push(ms(start));
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }
  return { latency: summarise(times), statuses };
}
