import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { FunctionSpec } from '../../cloud/catalog-types.js';
import { postToConnection } from '../../../functions/platform/connections.js';
import { dynamoClient, tableName } from '../../../functions/platform/table.js';

/**
 * The floor under a conversation turn (`npm run bench`, part `conversation`): the least work any
 * turn must do, served by the stack's own relay gateway (lib/local/relay-gateway.ts) at
 * `/bench-floor` (RELAY_FLOOR_PATH) beside the turns it is compared with — same server, same process and
 * event loop, same priority — when the bench starts the stack with LOCAL_BENCH_RELAY_FLOOR=1. For
 * each `prompt` frame: one GetItem (the item the frame names, `item: {pk, sk}`: the agent's, read as a
 * turn reads its state), then — at once, as a turn overlaps its start's write with the model request —
 * one PutItem (a bench-only item: the caller's line) on the stack's table beside one streamed request
 * to the stack's model simulator (LLM_BASE_URL, as the OpenAI-compatible adapter
 * makes it: plain fetch, `stream: true`), its first chunk forwarded with PostToConnection (the
 * handlers' own Management API client) as a `text` frame, then the rest of the stream read to its end
 * (the connection is reused, as the adapter's is); the first chunk is forwarded once the write is
 * done, as a turn sends nothing before its start is stored. The frame carries `model_ms` (request → first
 * chunk), the model's time to first token.
 */
export const RELAY_FLOOR_PATH = 'bench-floor';

export const RELAY_FLOOR_FUNCTION: FunctionSpec = {
  id: 'BenchRelayFloor',
  group: 'conversation',
  entry: 'lib/tools/bench/relay-floor-handler.ts',
  webSocket: { routes: ['$connect', '$default', '$disconnect'] },
  access: { table: 'readwrite', manageConnections: true, languageModel: true },
};

export interface FloorEvent {
  requestContext: { routeKey: string; connectionId: string };
  body?: string;
}

const S = (value: string) => ({ S: value });

export async function handler(event: FloorEvent): Promise<{ statusCode: number }> {
  const { routeKey, connectionId } = event.requestContext;
  if (routeKey !== '$default' || !event.body) return { statusCode: 200 };
  const frame = JSON.parse(event.body) as {
    type?: string;
    voicePrompt?: string;
    system?: string;
    item?: { pk: string; sk: string };
  };
  if (frame.type !== 'prompt') return { statusCode: 200 };
  const line = frame.voicePrompt ?? '';
  const client = dynamoClient();
  const table = tableName();
  await client.send(
    new GetItemCommand({
      TableName: table,
      Key: { pk: S(frame.item?.pk ?? ''), sk: S(frame.item?.sk ?? '') },
    }),
  );
  const written = client.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: S(`BENCHFLOOR#RELAY#${connectionId}`), sk: S('TURN'), line: S(line) },
    }),
  );
  const requestedAt = performance.now();
  const response = await fetch(`${process.env.LLM_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: process.env.LLM_MODEL,
      stream: true,
      messages: [
        { role: 'system', content: frame.system ?? '' },
        { role: 'user', content: line },
      ],
    }),
  });
  if (!response.ok || !response.body) throw new Error(`model simulator: ${response.status}`);
  const decoder = new TextDecoder();
  let buffered = '';
  let forwarded = false;
  for await (const bytes of response.body) {
    if (forwarded) continue; // read to the end: the connection goes back to the pool
    buffered += decoder.decode(bytes as Uint8Array, { stream: true });
    let newline: number;
    while (!forwarded && (newline = buffered.indexOf('\n')) >= 0) {
      const sse = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!sse.startsWith('data:') || sse === 'data: [DONE]') continue;
      const chunk = JSON.parse(sse.slice('data:'.length)) as {
        choices?: { delta?: { content?: string } }[];
      };
      const token = chunk.choices?.[0]?.delta?.content;
      if (!token) continue;
      const modelMs = performance.now() - requestedAt;
      await written;
      await postToConnection(connectionId, { type: 'text', token, last: true, model_ms: modelMs });
      forwarded = true;
    }
  }
  return { statusCode: 200 };
}
