import { handleWebCallWebhook } from '../calling/web-call-webhook.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/web-call` (a function URL): the TwiML App's voice URL, asked when a browser
 * connects a web call with `@twilio/voice-sdk` (calling/web-call-webhook.ts), signed with
 * `X-Twilio-Signature`. The call's client leg is bound to it and connected to the voice relay, or
 * rejected.
 */
export const handler = webhookHandler(async ({ rawBody, headers, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await handleWebCallWebhook({ url, params, signature: headers[SIGNATURE_HEADER] });
  return { status: result.status, body: result.body, contentType: result.contentType };
});
