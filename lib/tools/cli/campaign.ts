import cliProgress from 'cli-progress';
import { ApiClient } from './api-client.js';

/**
 * `npm run cli -- campaign watch ID --workspace WS (--email E | --token T) [--json]`: follows a
 * campaign's progress (GET …/campaigns/{id}/progress) with a progress bar — contacts done (completed,
 * failed, skipped, cancelled) of the total, and the calls under way — until the campaign is completed
 * or cancelled (or, with --until-paused, paused); then the final counts.
 */

export interface CampaignProgress {
  id: string;
  total: number;
  pending: number;
  calling: number;
  completed: number;
  failed: number;
  skipped: number;
  retry_scheduled: number;
  cancelled: number;
  credits_used: number;
}

interface CampaignView {
  id: string;
  name: string;
  status: string;
  paused_reason: string | null;
}

const done = (p: CampaignProgress) => p.completed + p.failed + p.skipped + p.cancelled;

export async function watchCampaign(
  client: ApiClient,
  input: {
    workspaceId: string;
    campaignId: string;
    showProgress: boolean;
    untilPaused?: boolean;
    intervalMs?: number;
  },
  log: (line: string) => void,
): Promise<{ campaign: CampaignView; progress: CampaignProgress }> {
  const path = `/api/v1/workspaces/${input.workspaceId}/campaigns/${input.campaignId}`;
  const bar = input.showProgress
    ? new cliProgress.SingleBar(
        {
          format:
            'campaign [{bar}] {percentage}% | {value}/{total} contacts | {calling} calling, {retry} to retry | {credits} credits',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  let first = true;
  for (;;) {
    const [campaign, progress] = await Promise.all([
      client.get<CampaignView>(path),
      client.get<CampaignProgress>(`${path}/progress`),
    ]);
    if (first) log(`campaign ${campaign.id} (${campaign.name}): ${campaign.status}`);
    first = false;
    const payload = {
      calling: progress.calling,
      retry: progress.retry_scheduled,
      credits: progress.credits_used,
    };
    if (bar) {
      if (!started) bar.start(Math.max(progress.total, 1), done(progress), payload);
      started = true;
      bar.setTotal(Math.max(progress.total, 1));
      bar.update(done(progress), payload);
    }
    const over =
      campaign.status === 'completed' ||
      campaign.status === 'cancelled' ||
      (input.untilPaused && campaign.status === 'paused');
    if (over) {
      bar?.stop();
      return { campaign, progress };
    }
    await new Promise((resolve) => setTimeout(resolve, input.intervalMs ?? 500));
  }
}

export function describeCampaign(result: { campaign: CampaignView; progress: CampaignProgress }): string {
  const { campaign, progress: p } = result;
  return (
    `Campaign ${campaign.id} ${campaign.status}${campaign.paused_reason ? ` (${campaign.paused_reason})` : ''}: ` +
    `${p.total} contacts, ${p.completed} completed, ${p.failed} failed, ${p.skipped} skipped, ` +
    `${p.cancelled} cancelled, ${p.pending} pending, ${p.retry_scheduled} to retry; ${p.credits_used} credits`
  );
}
