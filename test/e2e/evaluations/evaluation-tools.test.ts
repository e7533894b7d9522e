import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  createAgent,
  functionTool,
  theSignedRequest,
  newTenant,
  startEndpoint,
  ws,
  type Endpoint,
} from '../agents-tools/fixtures.js';

/**
 * An agent's function tool in an evaluation: the scenario's caller names it, the scripted call runs it
 * against a real local endpoint as a phone call would — signed, static arguments merged — but with
 * `test: true` and `channel: "evaluation"`, so a business can keep evaluations from booking for real;
 * the model speaks the answer and the scenario is judged on it.
 */

let endpoint: Endpoint;
beforeAll(async () => {
  endpoint = await startEndpoint();
});
afterAll(async () => {
  await endpoint.stop();
});

test('an evaluation runs the agent tool the caller names, marked test and evaluation, once, and is judged on its answer', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, [
    functionTool(`${endpoint.base}/ok`, { static_arguments: { office: 'north' } }),
  ]);
  const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/evaluations`, {
    token: tenant.owner.token,
    body: {
      scenarios: [
        {
          name: 'Books an inspection',
          caller_script: ['Can you book an inspection for Saturday?'],
          expect: ["that's booked"],
        },
      ],
    },
  });
  expect(res.status).toBe(201);
  const done = await waitFor(
    async () => {
      const run = await api('GET', `${ws(tenant)}/agents/${agent.id}/evaluations/${res.body.id}`, {
        token: tenant.owner.token,
      });
      return run.body.status !== 'running' ? (run.body as Json) : undefined;
    },
    { what: 'the evaluation to end', timeoutMs: 60_000 },
  );
  expect(done.status).toBe('completed');
  expect(done.results[0]).toMatchObject({ scenario: 'Books an inspection', passed: true, missing: [] });

  const body = await theSignedRequest(endpoint, tenant, '/ok', agent.id);
  expect(body).toMatchObject({
    tool: 'book_inspection',
    test: true,
    call: { channel: 'evaluation', agent_id: agent.id, workspace_id: tenant.workspaceId },
    arguments: { date: 'Can you book an inspection for Saturday?', office: 'north' },
  });
}, 90_000);
