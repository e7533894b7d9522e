import { answerWhisper } from '../calling/transfer.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/whisper` (a function URL): a warm transfer's person answered; their leg
 * asks what they hear before being connected — the whisper stored on the call (calling/transfer.ts),
 * matched by the call id in the URL and the leg's `ParentCallSid`. Signed with `X-Twilio-Signature`.
 */
export const handler = webhookHandler(async ({ rawBody, headers, query, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await answerWhisper({ url, query, params, signature: headers[SIGNATURE_HEADER] });
  return { status: result.status, body: result.body, contentType: result.contentType };
});
