import type { EventSubscriber } from '../platform/workspace-events.js';

/**
 * `call.ended` of a campaign's call (its data carries `campaign_id`): the batch contact gets its
 * outcome at once and the dialer is nudged to fill the freed slot (unless its next pass is scheduled
 * already: see dialer.ts `followUp`). Idempotent on the event: the
 * outcome is conditioned on the contact still `calling` with this call, so a redelivered event (or
 * the dialer's own reconciliation from the call record, which also covers a lost event) changes
 * nothing twice.
 */
export const campaignEventSubscriber: EventSubscriber = {
  name: 'campaigns',
  types: ['call.ended'],
  async handle(event) {
    const campaignId = event.data.campaign_id;
    const callId = event.data.call_id;
    if (typeof campaignId !== 'string' || typeof callId !== 'string' || !campaignId) return;
    // The dialer (and start-call behind it) is loaded by the first campaign call's event only.
    const { recordCallEnded } = await import('./dialer-reconcile.js');
    const { followUp } = await import('./dialer.js');
    const recorded = await recordCallEnded(event.workspaceId, campaignId, callId);
    // A pass now, unless one is scheduled already (the follow-ups of a campaign with calls out).
    if (recorded) await followUp({ workspaceId: event.workspaceId, campaignId }, 0);
  },
};
