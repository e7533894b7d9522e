import { logger } from '../platform/logger.js';
import { sendMessages } from '../platform/queue.js';
import type { SmsMessage as SmsQueueMessage } from '../platform/queue-messages.js';
import { SmsHeldEntity } from './entities.js';

/**
 * SMS sends held while the organisation's billing was past due (direct messages, replies and
 * workflow messages one by one; campaign chunks whole) go back on the `sms` queue when billing is in
 * good standing again. The consumer checks the standing again (too early: held again) and each send
 * is idempotent, so a release sent twice sends nothing twice. Returns how many were released.
 */
export async function releaseHeldSms(organisationId: string): Promise<number> {
  const held = await SmsHeldEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  const messages = held.data.map((item) => item.message as SmsQueueMessage);
  if (messages.length > 0) {
    await sendMessages('sms', messages);
    logger.info('released held SMS', { organisationId, count: messages.length });
  }
  return messages.length;
}

/** How many SMS sends an organisation has waiting. */
export async function countHeldSms(organisationId: string): Promise<number> {
  const held = await SmsHeldEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  return held.data.length;
}
