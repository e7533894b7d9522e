import type { ApiKeyPrincipal } from '../platform/auth/principal.js';
import { clock } from '../platform/clock.js';
import { conflict, HttpError, notFound, tooManyRequests } from '../platform/errors.js';
import { isConditionFailure } from '../platform/table.js';
import { TriggerWindowEntity } from './entities.js';
import { externalEventId, startRun } from './runs.js';
import { MAX_TRIGGER_PAYLOAD_BYTES } from './schemas.js';
import { findWorkflow, requireWorkflowsOnPlan, WORKFLOW_NOT_FOUND } from './service.js';

/**
 * The external trigger, `POST /api/v1/triggers/{workflow_id}`, in this order of checks: the kernel's
 * credential (401), scope `workflows:trigger` (403) and body (a JSON object: 422); then an unknown or
 * deleted workflow 404; a key of another workspace 403; the plan 402; a workflow that is disabled,
 * or not triggered externally, 409; a payload over 64 KB 413; more than TRIGGERS_PER_MINUTE triggers
 * of the workflow in the current minute 429 with Retry-After; else a run (202 {run_id}).
 *
 * Rate limit: a counter per workflow and fixed one-minute window (an atomic ADD conditioned on the
 * count being under the limit), kept by DynamoDB's TTL for two minutes. A replay of an
 * Idempotency-Key is answered by the kernel before this runs and is not counted.
 */
export const TRIGGERS_PER_MINUTE = 60;
export const WORKFLOW_DISABLED = 'Workflow is disabled';
export const WORKFLOW_NOT_EXTERNAL = 'Workflow is not triggered externally';
export const TRIGGER_RATE_LIMITED = 'Too many requests';
export const PAYLOAD_TOO_LARGE = `The payload is larger than ${MAX_TRIGGER_PAYLOAD_BYTES / 1024} KB`;

export async function triggerExternal(input: {
  principal: ApiKeyPrincipal;
  workflowId: string;
  payload: Record<string, unknown>;
  rawBody: string;
  rawIsBase64: boolean;
  idempotencyKey: string | undefined;
  wrongWorkspace: () => Error;
}): Promise<string> {
  const { principal } = input;
  const workflow = await findWorkflow(input.workflowId, { consistent: true });
  if (!workflow) throw notFound(WORKFLOW_NOT_FOUND);
  if (
    workflow.workspaceId !== principal.workspaceId ||
    workflow.organisationId !== principal.organisationId
  ) {
    throw input.wrongWorkspace();
  }
  await requireWorkflowsOnPlan(workflow.organisationId);
  if (workflow.triggerType !== 'external') throw conflict(WORKFLOW_NOT_EXTERNAL);
  if (!workflow.enabled) throw conflict(WORKFLOW_DISABLED);
  const bytes = input.rawIsBase64
    ? Buffer.from(input.rawBody, 'base64').length
    : Buffer.byteLength(input.rawBody, 'utf8');
  if (bytes > MAX_TRIGGER_PAYLOAD_BYTES) throw new HttpError(413, PAYLOAD_TOO_LARGE);
  await countTrigger(workflow.workflowId);
  const { runId } = await startRun(workflow, {
    id: externalEventId(principal.keyId, input.idempotencyKey),
    type: 'external',
    occurred_at: clock.now().toISOString(),
    data: input.payload,
  });
  return runId;
}

async function countTrigger(workflowId: string): Promise<void> {
  const nowSeconds = Math.floor(clock.now().getTime() / 1000);
  const windowStart = nowSeconds - (nowSeconds % 60);
  try {
    await TriggerWindowEntity.update({ workflowId, windowStart })
      .add({ count: 1 })
      .set({ expiresAt: windowStart + 120 })
      .where((attr, op) => `${op.notExists(attr.count)} OR ${op.lt(attr.count, TRIGGERS_PER_MINUTE)}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    throw tooManyRequests(TRIGGER_RATE_LIMITED, Math.max(1, windowStart + 60 - nowSeconds));
  }
}
