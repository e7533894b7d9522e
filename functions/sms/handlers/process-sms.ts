import { queueConsumer } from '../../platform/queue-consumer.js';
import { processChunk } from '../campaign-chunks.js';
import { planPage } from '../campaign-pages.js';
import { sendQueued } from '../send-sms.js';

/**
 * The `sms` queue: held messages sent once billing recovers, and SMS campaigns' audience pages and
 * send chunks (functions/sms/campaign-pages.ts, functions/sms/campaign-chunks.ts), each safe to
 * receive twice.
 */
export const handler = queueConsumer('sms', (message) => {
  switch (message.type) {
    case 'sms.send':
      return sendQueued(message.workspace_id, message.message_id);
    case 'sms.campaign.page':
      return planPage(
        message.workspace_id,
        message.campaign_id,
        message.page,
        message.cursor,
        message.campaign,
      );
    case 'sms.campaign.chunk':
      return processChunk(message.workspace_id, message.campaign_id, message.contact_ids, {
        organisationId: message.organisation_id,
        fromPhone: message.from_phone,
        released: message.released,
      });
  }
});
