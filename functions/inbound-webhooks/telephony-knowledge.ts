import { answerKnowledgeTool } from '../knowledge/voice-tool.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/knowledge` (a function URL): the voice runtime's knowledge tool — what the
 * call's agent's knowledge bases say about what the caller asked (functions/knowledge/voice-tool.ts).
 * Form-encoded and signed with `X-Twilio-Signature` over the URL it requested; a bad signature is 401.
 */
export const handler = webhookHandler(async ({ rawBody, headers, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const answer = await answerKnowledgeTool({ url, params, signature: headers[SIGNATURE_HEADER] });
  return { status: answer.status, body: answer.body };
});
