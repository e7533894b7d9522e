import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { handler } from '../../../functions/calling/handlers/start-call.js';
import { getCall } from '../../../functions/calling/service.js';
import type { HttpEvent } from '../../../functions/platform/http/index.js';
import { roundTrips } from '../../../functions/platform/table.js';
import {
  apiKey,
  readyToCall,
  setConcurrencyLimit,
  TEST_NUMBERS,
  type Tenant,
} from '../../e2e/calling/fixtures.js';

/**
 * The start-call budget of docs/architecture.md: at most 4 DynamoDB round trips on the happy path, counted by the
 * table client's counting middleware, with the handler invoked in this process (an API Gateway v2
 * event, as Lambda would get it) after a warm-up request.
 */

let tenant: Tenant;
let agentId: string;
let key: string;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id;
  await setConcurrencyLimit(tenant.workspaceId, 1000);
  ({ key } = await apiKey(tenant));
});

function event(token: string, body: unknown, headers: Record<string, string> = {}): HttpEvent {
  const rawPath = `/api/v1/workspaces/${tenant.workspaceId}/agents/${agentId}/start-call`;
  return {
    version: '2.0',
    routeKey: 'POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call',
    rawPath,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    pathParameters: { workspace_id: tenant.workspaceId, agent_id: agentId },
    requestContext: { requestId: randomUUID(), http: { method: 'POST', path: rawPath } },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  } as unknown as HttpEvent;
}

const context = {
  functionName: 'StartCall',
  awsRequestId: 'budget',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

async function invoke(token: string, body: unknown, headers?: Record<string, string>) {
  const response = (await handler(event(token, body, headers), context as never)) as {
    statusCode: number;
    body: string;
  };
  return { status: response.statusCode, body: JSON.parse(response.body) };
}

async function measured(
  token: string,
  headers?: Record<string, string>,
  extra: Record<string, unknown> = {},
) {
  roundTrips.reset();
  const res = await invoke(
    token,
    { to_phone: TEST_NUMBERS.answered, parameters: { name: 'Budget' }, ...extra },
    headers,
  );
  const count = roundTrips.count;
  expect(res.status).toBe(201);
  return { count, res };
}

describe('start-call costs at most 4 DynamoDB round trips', () => {
  beforeAll(async () => {
    // Warm-up: JWT user resolution and the API key's last-used write happen once per container. Both
    // are awaited before the handler returns (nothing is left running to be counted later), so the
    // measured requests can follow at once.
    expect((await invoke(key, { to_phone: TEST_NUMBERS.answered })).status).toBe(201);
    expect((await invoke(tenant.owner.token, { to_phone: TEST_NUMBERS.answered })).status).toBe(201);
  });

  it('API key: key read, batched read, one transaction (3); with an Idempotency-Key 4', async () => {
    expect((await measured(key)).count).toBe(3);
    const { count, res } = await measured(key, { 'idempotency-key': randomUUID() });
    expect(count).toBe(4);
    // The one transaction wrote the call and its first status event.
    const call = await getCall(tenant.workspaceId, res.body.id);
    expect(call?.statusHistory[0]).toMatchObject({
      status: 'created',
      source: 'api',
      at: res.body.created_at,
    });
  });

  it('a pinned agent_version is read in the same batched read: no round trip more', async () => {
    expect((await measured(key, undefined, { agent_version: 1 })).count).toBe(3);
    const { count, res } = await measured(tenant.owner.token, undefined, { agent_version: 1 });
    expect(count).toBe(3);
    expect(res.body.agent_version).toBe(1);
  });

  it('JWT: two batched reads, one transaction (3); with an Idempotency-Key 4', async () => {
    expect((await measured(tenant.owner.token)).count).toBe(3);
    expect((await measured(tenant.owner.token, { 'idempotency-key': randomUUID() })).count).toBe(4);
  });

  it('a replayed Idempotency-Key costs no more', async () => {
    const idempotencyKey = randomUUID();
    const first = await measured(key, { 'idempotency-key': idempotencyKey });
    const replay = await measured(key, { 'idempotency-key': idempotencyKey });
    expect(replay.res.body).toEqual(first.res.body);
    expect(replay.count).toBeLessThanOrEqual(4);
  });
});
