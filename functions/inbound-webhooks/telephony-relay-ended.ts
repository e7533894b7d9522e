import { answerRelayEnded } from '../calling/relay-ended.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/relay-ended` (a function URL): the provider asks what to do when a call's
 * voice relay session ended — hang up, or dial the agent's transfer number (calling/relay-ended.ts).
 */
export const handler = webhookHandler(async ({ rawBody, headers, query, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await answerRelayEnded({ url, query, params, signature: headers[SIGNATURE_HEADER] });
  return { status: result.status, body: result.body, contentType: result.contentType };
});
