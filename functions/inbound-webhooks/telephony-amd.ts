import { handleAmdCallback } from '../calling/amd.js';
import { stopForVoicemail } from '../conversation/voicemail.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/amd` (a function URL): answering-machine detection results of outbound
 * calls (calling/amd.ts), signed with `X-Twilio-Signature`. On a machine the conversation stops
 * (conversation/voicemail.ts) and the `<Connect action>` leaves the voicemail or hangs up.
 */
export const handler = webhookHandler(async ({ rawBody, headers, query, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await handleAmdCallback(
    { url, query, params, signature: headers[SIGNATURE_HEADER] },
    { onMachine: stopForVoicemail },
  );
  return { status: result.status, body: result.body, contentType: result.contentType };
});
