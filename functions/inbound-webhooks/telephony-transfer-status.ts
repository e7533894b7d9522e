import { answerTransferStatus } from '../calling/transfer.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { SIGNATURE_HEADER } from '../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/transfer-status` (a function URL): a warm transfer's `<Dial action>` —
 * how the dial to the person ended (`DialCallStatus`), recorded once on the call; not connected, the
 * caller hears one short line and the call ends (calling/transfer.ts). Signed with `X-Twilio-Signature`.
 */
export const handler = webhookHandler(async ({ rawBody, headers, query, url }) => {
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawBody)) params[name] = value;
  const result = await answerTransferStatus({ url, query, params, signature: headers[SIGNATURE_HEADER] });
  return { status: result.status, body: result.body, contentType: result.contentType };
});
