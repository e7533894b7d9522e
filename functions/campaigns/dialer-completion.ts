import { displayCredits } from '../billing/credits.js';
import { listImports } from '../contacts/imports.js';
import { clock } from '../platform/clock.js';
import { publishWorkspaceEvent } from '../platform/workspace-events.js';
import { BatchContactEntity, type Campaign } from './entities.js';
import { getCampaign, readProgress, transact } from './service.js';
import { readBatchContacts } from './dialer-reads.js';
import { moveMany } from './dialer-transitions.js';

/**
 * The dialer's ends of a campaign (dialer.ts): a cancelled one's waiting contacts cancelled;
 * completion, `campaign.completed` and retiring the active marker.
 */

const CANCEL_BATCH = 500;

export async function cancelWaiting(campaign: Campaign): Promise<number> {
  const { workspaceId, campaignId } = campaign;
  let moved = 0;
  for (const state of ['pending', 'retry_scheduled'] as const) {
    const { data } = await BatchContactEntity.query
      .byState({ workspaceId, campaignId, state })
      .go({ count: CANCEL_BATCH });
    const fresh = (await readBatchContacts(data)).filter((bc) => bc.state === state);
    moved += await moveMany(
      campaign,
      fresh.map((bc) => ({ bc, to: 'cancelled' })),
    );
  }
  if (moved > 0) return moved;
  // Nothing waiting by the index: the counters decide (the index may lag behind).
  const progress = await readProgress(workspaceId, campaignId);
  return progress.pending + progress.retryScheduled + progress.calling;
}

/** Takes the campaign off the dialer's list once it has nothing to do (conditioned on its status). */
export async function retire(campaign: Campaign): Promise<void> {
  const { workspaceId, campaignId } = campaign;
  await transact((tx) => [
    tx.campaign
      .check({ workspaceId, campaignId })
      .where(
        (attr, op) =>
          `${op.eq(attr.status, campaign.status)} AND ${op.eq(attr.activeCalls, 0)}` +
          (campaign.status === 'completed' ? ` AND ${op.exists(attr.completionPublishedAt)}` : ''),
      )
      .commit(),
    tx.activeCampaign.delete({ workspaceId, campaignId }).commit(),
  ]);
}

export async function uploadsUnderWay(campaign: Campaign): Promise<boolean> {
  const { items } = await listImports(
    campaign.workspaceId,
    { limit: 100 },
    { campaignId: campaign.campaignId },
  );
  return items.some((job) => job.status === 'pending' || job.status === 'processing');
}

export async function complete(campaign: Campaign): Promise<void> {
  const now = clock.now().toISOString();
  const { canceled } = await transact((tx) => [
    tx.campaign
      .patch({ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId })
      .set({ status: 'completed', completedAt: now, updatedAt: now })
      .where((attr, op) => `${op.eq(attr.status, 'running')} AND ${op.eq(attr.activeCalls, 0)}`)
      .commit(),
  ]);
  if (canceled) return;
  const completed = await getCampaign(campaign.workspaceId, campaign.campaignId);
  if (completed) await publishCompleted(completed);
}

/** `campaign.completed`, then the flag, then the marker (each step safe to repeat). */
export async function publishCompleted(campaign: Campaign): Promise<void> {
  const { workspaceId, campaignId } = campaign;
  if (!campaign.completionPublishedAt) {
    const progress = await readProgress(workspaceId, campaignId);
    await publishWorkspaceEvent({
      id: `evt_campaign_completed_${campaignId}`,
      type: 'campaign.completed',
      workspaceId,
      organisationId: campaign.organisationId,
      occurredAt: campaign.completedAt,
      data: {
        campaign_id: campaignId,
        name: campaign.name,
        agent_id: campaign.agentId,
        started_at: campaign.startedAt ?? null,
        completed_at: campaign.completedAt ?? null,
        total: progress.total,
        completed: progress.completed,
        failed: progress.failed,
        skipped: progress.skipped,
        cancelled: progress.cancelled,
        credits_used: displayCredits(progress.creditsUnits),
      },
    });
    await markPublished(campaign);
  }
  await retire({ ...campaign, completionPublishedAt: campaign.completionPublishedAt ?? 'now' });
}

async function markPublished(campaign: Campaign): Promise<void> {
  await transact((tx) => [
    tx.campaign
      .patch({ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId })
      .set({ completionPublishedAt: clock.now().toISOString() })
      .commit(),
  ]);
}
