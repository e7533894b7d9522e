import { logger } from '../platform/logger.js';
import { telephony } from '../providers/telephony/index.js';
import { emptyTwiml } from '../providers/telephony/twilio-format.js';
import { applyStatusCallback, receiveSms } from './inbound.js';

/**
 * `POST /webhooks/telephony/sms`: Twilio's SMS webhooks. The signature (`X-Twilio-Signature`, over
 * the URL and the form parameters, with the telephony account's auth token) is checked before
 * anything is read: a bad or missing one is 401 and changes nothing. `?event=status&workspace_id=…
 * &message_id=…` (the URL we gave the provider with the message, so it is signed too) is a delivery
 * status callback; anything else is a message someone sent to one of our numbers.
 */
export interface SmsWebhookRequest {
  url: string;
  query: Record<string, string>;
  params: Record<string, string>;
  signature?: string;
}

export async function handleSmsWebhook(
  request: SmsWebhookRequest,
): Promise<{ status: number; contentType: string; body: string }> {
  if (!(await telephony().verifySignature(request.url, request.params, request.signature))) {
    return { status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'Unauthorized' }) };
  }
  const { params, query } = request;
  const outcome =
    query.event === 'status'
      ? await applyStatusCallback({
          workspaceId: query.workspace_id ?? '',
          messageId: query.message_id ?? '',
          providerStatus: params.MessageStatus ?? params.SmsStatus ?? '',
          providerMessageId: params.MessageSid ?? params.SmsSid,
          errorCode: params.ErrorCode,
          campaignId: query.campaign_id,
        })
      : await receiveSms({
          providerMessageId: params.MessageSid ?? params.SmsMessageSid ?? params.SmsSid ?? '',
          from: params.From ?? '',
          to: params.To ?? '',
          body: params.Body ?? '',
        });
  logger.info('sms webhook handled', { event: query.event ?? 'inbound', outcome });
  // An empty TwiML answer: nothing is sent back automatically (replies are ours to send).
  return { status: 200, contentType: 'text/xml', body: emptyTwiml() };
}
