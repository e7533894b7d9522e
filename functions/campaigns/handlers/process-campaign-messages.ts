import { planImport, processChunk } from '../../contacts/import-worker.js';
import { queueConsumer } from '../../platform/queue-consumer.js';
import { dialPass } from '../dialer.js';
import { campaignPipeline } from '../uploads.js';

/**
 * The `campaigns` queue: dialer passes (functions/campaigns/dialer.ts) and uploads' plan and chunk
 * steps (the contact imports' machinery, functions/campaigns/uploads.ts). Each safe to receive twice.
 */
export const handler = queueConsumer('campaigns', (message) => {
  switch (message.type) {
    case 'campaign.dial':
      return dialPass(message.workspace_id, message.campaign_id);
    case 'campaign.upload.plan':
      return planImport(
        message.workspace_id,
        message.job_id,
        {},
        campaignPipeline(message.workspace_id, message.campaign_id),
      );
    case 'campaign.upload.chunk':
      return processChunk(
        message.workspace_id,
        message.job_id,
        message.chunk,
        {},
        campaignPipeline(message.workspace_id, message.campaign_id),
      );
  }
});
