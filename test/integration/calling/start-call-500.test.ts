import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { newId } from '../../../functions/platform/ids.js';

/**
 * Section 7's 500 row: when the table cannot be reached, start-call answers 500 with the documented
 * message (the cause goes to the log only). The fault is real: this test file's modules are loaded
 * with a table name that does not exist, so every DynamoDB request of the handler fails.
 */

const realTable = process.env.TABLE_NAME;

beforeAll(() => {
  process.env.TABLE_NAME = 'voice-agent-table-that-does-not-exist';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

afterAll(() => {
  process.env.TABLE_NAME = realTable;
});

it('answers 500 {"error": "Internal server error. Please try again later."}', async () => {
  const { handler } = await import('../../../functions/calling/handlers/start-call.js');
  const workspaceId = newId('workspace');
  const agentId = newId('agent');
  const rawPath = `/api/v1/workspaces/${workspaceId}/agents/${agentId}/start-call`;
  const key = `vak_${newId('apiKey')}_${'A'.repeat(43)}`;
  const response = (await handler(
    {
      version: '2.0',
      routeKey: 'POST /api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call',
      rawPath,
      rawQueryString: '',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      pathParameters: { workspace_id: workspaceId, agent_id: agentId },
      requestContext: { requestId: randomUUID(), http: { method: 'POST', path: rawPath } },
      body: JSON.stringify({ to_phone: '+61491570156' }),
      isBase64Encoded: false,
    } as never,
    { functionName: 'StartCall', getRemainingTimeInMillis: () => 10_000 } as unknown as Context as never,
  )) as { statusCode: number; body: string; headers: Record<string, string> };
  expect(response.statusCode).toBe(500);
  expect(JSON.parse(response.body)).toEqual({ error: 'Internal server error. Please try again later.' });
  expect(response.headers['x-request-id']).toBeTruthy();
});
