import type { z } from 'zod';
import type { CampaignResponse } from './schemas.js';
import type { Campaign } from './entities.js';
import { campaignView, nextDial, readProgress } from './service.js';
import { campaignWarnings } from './uploads.js';

/**
 * A campaign on the wire with what it reads beside its record: its progress (the counter shards),
 * when it dials next and why, and its uploads' warnings (parameters rows lacked).
 */
export async function readCampaignView(
  campaign: Campaign,
  workspaceTimezone: string,
): Promise<z.infer<typeof CampaignResponse>> {
  const [progress, next, warnings] = await Promise.all([
    readProgress(campaign.workspaceId, campaign.campaignId),
    nextDial(campaign, workspaceTimezone),
    campaignWarnings(campaign),
  ]);
  return campaignView(campaign, progress, next, warnings);
}
