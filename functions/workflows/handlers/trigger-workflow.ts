import { implement } from '../../platform/http/index.js';
import { API_KEY_WRONG_WORKSPACE } from '../../platform/http/authenticate.js';
import { idempotencyKeyFrom } from '../../platform/idempotency.js';
import { forbidden } from '../../platform/errors.js';
import { workflowRoutes } from '../routes.js';
import { triggerExternal } from '../trigger.js';

/**
 * POST /api/v1/triggers/{workflow_id} — an API key of the workflow's workspace with scope
 * workflows:trigger (the kernel refuses a user's token and checks the scope: 403).
 */
export const handler = implement(workflowRoutes.triggerWorkflow, async (req) => {
  const runId = await triggerExternal({
    principal: req.principal,
    workflowId: req.params.workflow_id,
    payload: req.body,
    rawBody: req.event.body ?? '',
    rawIsBase64: req.event.isBase64Encoded === true,
    idempotencyKey: idempotencyKeyFrom(req.headers),
    wrongWorkspace: () => forbidden(API_KEY_WRONG_WORKSPACE),
  });
  return { status: 202, body: { id: runId, run_id: runId } };
});
