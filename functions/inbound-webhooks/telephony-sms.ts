import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';
import { handleSmsWebhook } from '../sms/webhook.js';

/**
 * `POST /webhooks/telephony/sms` (a function URL): inbound SMS and delivery status callbacks from the
 * telephony provider, form-encoded and signed with `X-Twilio-Signature` over the URL it requested. A
 * bad signature is 401 and changes nothing; a replayed MessageSid or callback changes nothing again.
 */
export const handler = webhookHandler(async ({ rawBody, headers, query, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await handleSmsWebhook({ url, query, params, signature: headers[SIGNATURE_HEADER] });
  return { status: result.status, body: result.body, contentType: result.contentType };
});
