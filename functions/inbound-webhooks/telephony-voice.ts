import { handleVoiceWebhook } from '../calling/voice-webhook.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { memoriesFor } from '../post-call/memories.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/voice` (a function URL): call status callbacks, recording callbacks and
 * inbound calls from the telephony provider, form-encoded and signed with `X-Twilio-Signature` over
 * the URL it requested. A bad signature is 401 and changes nothing. An inbound call of an agent with
 * conversation memories gets the caller's earlier calls' summaries (post-call keeps them).
 */
export const handler = webhookHandler(async ({ rawBody, headers, query, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await handleVoiceWebhook(
    { url, query, params, signature: headers[SIGNATURE_HEADER] },
    { memories: memoriesFor },
  );
  return { status: result.status, body: result.body, contentType: result.contentType };
});
