import { logger } from '../platform/logger.js';
import { sendMessages } from '../platform/queue.js';
import { HeldActionEntity } from './entities.js';
import type { ActionMessage } from './schemas.js';

/**
 * Charged post-call actions (owner SMS, caller SMS, email) wait here while the organisation's billing
 * is not in good standing (a failed subscription payment). Billing calls `releaseHeldActions` when
 * the organisation is back in good standing; each held action goes back on the actions queue, where
 * the consumer checks the standing again before it runs (so a release that comes too early only
 * holds them again, and a release sent twice runs nothing twice).
 *
 * Returns how many actions were released.
 */
export async function releaseHeldActions(organisationId: string): Promise<number> {
  const held = await HeldActionEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  const messages: ActionMessage[] = held.data.map((item) => ({
    type: 'post_call.action',
    workspace_id: item.workspaceId,
    organisation_id: item.organisationId,
    call_id: item.callId,
    action_id: item.actionId,
  }));
  if (messages.length > 0) {
    await sendMessages('postCallActions', messages);
    logger.info('released held post-call actions', { organisationId, count: messages.length });
  }
  return messages.length;
}

/** How many charged actions an organisation has waiting (billing views and tests). */
export async function countHeldActions(organisationId: string): Promise<number> {
  const held = await HeldActionEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  return held.data.length;
}
