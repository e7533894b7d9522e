import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import { ws, type Tenant } from '../calling/fixtures.js';

/**
 * Workflows through the gateway. Tenants, members, API keys, agents and numbers are the calling
 * suite's fixtures; every workflow, run and review goes through the routes under test.
 */
export {
  addMember,
  apiKey,
  createAgent,
  newTenant,
  numberFor,
  setPlan,
  TEST_NUMBERS,
  ws,
  type Tenant,
  type User,
} from '../calling/fixtures.js';

export const workflowsPath = (tenant: Tenant) => `${ws(tenant)}/workflows`;
export const workflowPath = (tenant: Tenant, workflowId: string) => `${workflowsPath(tenant)}/${workflowId}`;
export const runsPath = (tenant: Tenant, workflowId: string) => `${workflowPath(tenant, workflowId)}/runs`;
export const runPath = (tenant: Tenant, workflowId: string, runId: string) =>
  `${runsPath(tenant, workflowId)}/${runId}`;
export const triggerPath = (workflowId: string) => `/api/v1/triggers/${workflowId}`;

type Stages = Record<string, unknown>;

/** A workflow body: review by hand everywhere unless said otherwise. */
export function workflowBody(overrides: {
  name?: string;
  trigger?: Json;
  auto_mode?: boolean;
  yolo?: boolean;
  conditions?: Json[];
  action?: Json;
  enabled?: boolean;
  stages?: Stages;
}): Json {
  const yolo = overrides.yolo ?? false;
  return {
    name: overrides.name ?? 'Follow up',
    trigger: overrides.trigger ?? { type: 'external' },
    auto_mode: overrides.auto_mode ?? false,
    enabled: overrides.enabled ?? true,
    stages: overrides.stages ?? {
      signal: { yolo, conditions: overrides.conditions ?? [] },
      task: {
        yolo,
        action: overrides.action ?? { type: 'add_note', text: 'Follow up {{contact.first_name}}' },
      },
      outcome: { yolo },
    },
  };
}

export async function createWorkflow(tenant: Tenant, body: Json, token = tenant.owner.token): Promise<Json> {
  const res = await api('POST', workflowsPath(tenant), { token, body });
  if (res.status !== 201) throw new Error(`create workflow: ${res.status} ${res.text}`);
  return res.body;
}

export async function createContact(tenant: Tenant, body: Record<string, unknown>): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/contacts`, { token: tenant.owner.token, body });
  if (res.status !== 201) throw new Error(`create contact: ${res.status} ${res.text}`);
  return res.body;
}

export async function trigger(
  workflowId: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return api('POST', triggerPath(workflowId), { token: key, body, headers });
}

/** Every run of the workflow, newest first (following next_cursor). */
export async function listRuns(tenant: Tenant, workflowId: string, query = ''): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams(query);
    if (cursor) params.set('cursor', cursor);
    const res = await api('GET', `${runsPath(tenant, workflowId)}?${params.toString()}`, {
      token: tenant.owner.token,
    });
    if (res.status !== 200) throw new Error(`list runs: ${res.status} ${res.text}`);
    items.push(...(res.body.items as Json[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return items;
}

export async function getRun(tenant: Tenant, workflowId: string, runId: string): Promise<Json> {
  const res = await api('GET', runPath(tenant, workflowId, runId), { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`get run: ${res.status} ${res.text}`);
  return res.body;
}

/** Polls the run until `done` holds. */
export async function waitForRun(
  tenant: Tenant,
  workflowId: string,
  runId: string,
  done: (run: Json) => boolean,
  timeoutMs = 30_000,
): Promise<Json> {
  let last: Json;
  return waitFor(
    async () => {
      last = await getRun(tenant, workflowId, runId);
      return done(last) ? (last as Json) : undefined;
    },
    { what: () => `run ${runId} to get there; last seen: ${JSON.stringify(last)}`, timeoutMs },
  );
}

/** Waits for the run's stage to wait for review. */
export const waitForReview = (tenant: Tenant, workflowId: string, runId: string, stage: string) =>
  waitForRun(tenant, workflowId, runId, (run) => run.stages[stage].state === 'waiting_review');

export async function review(
  tenant: Tenant,
  workflowId: string,
  runId: string,
  stage: string,
  decision: 'approve' | 'reject',
  token = tenant.owner.token,
) {
  return api('POST', `${runPath(tenant, workflowId, runId)}/stages/${stage}/${decision}`, { token });
}

export async function notesOf(tenant: Tenant, contactId: string): Promise<Json[]> {
  const res = await api('GET', `${ws(tenant)}/contacts/${contactId}/notes?limit=100`, {
    token: tenant.owner.token,
  });
  if (res.status !== 200) throw new Error(`notes: ${res.status} ${res.text}`);
  return res.body.items as Json[];
}

export async function callsOf(tenant: Tenant): Promise<Json[]> {
  const res = await api('GET', `${ws(tenant)}/calls?limit=100`, { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`calls: ${res.status} ${res.text}`);
  return res.body.items as Json[];
}
