import { queueConsumer } from '../../platform/queue-consumer.js';
import type { SmsMessage } from '../../sms/entities.js';
import { runAction } from '../actions/run.js';
import { onPostCallSmsSent } from '../actions/sms-sent.js';

/**
 * A post-call SMS that went out is remembered as the latest message to its recipient (the SMS
 * domain's memory of outbound messages, with the recording's short code): the recipient's reply is
 * then tied to the code and shows on the public recording page.
 */
onPostCallSmsSent(async (sent) => {
  const { rememberOutbound } = await import('../../sms/sending.js');
  // rememberOutbound reads the recipient, the message id, the short code and when it was sent.
  const remembered: Pick<
    SmsMessage,
    'workspaceId' | 'messageId' | 'toPhone' | 'shortCode' | 'sentAt' | 'createdAt'
  > = {
    workspaceId: sent.workspaceId,
    messageId: sent.smsId,
    toPhone: sent.to,
    ...(sent.shortCode ? { shortCode: sent.shortCode } : {}),
    sentAt: sent.sentAt,
    createdAt: sent.sentAt,
  };
  return rememberOutbound(remembered as SmsMessage);
});

/**
 * Consumer of the `postCallActions` queue: one post-call action of one call per message (SMS,
 * email, webhook, contact update, profile enrichment). A failing action fails only its own message.
 */
export const handler = queueConsumer('postCallActions', runAction);
