import { isE164 } from '../../../functions/platform/phone.js';
import type { StackState } from '../../local/state.js';

/** What the SMS simulator answers when it delivers an inbound message (its `POST /inbound`). */
export interface InboundSms {
  /** The provider's message id (Twilio's `MessageSid`). */
  sid: string;
  /** What our SMS webhook answered (200: taken, or ignored for a number that is not ours). */
  http_status: number;
}

/**
 * `npm run cli -- sms receive --from E164 --to E164 --body TEXT [--sid SM…]`: the running stack's SMS
 * simulator delivers a signed inbound SMS to POST /webhooks/telephony/sms, exactly as the provider
 * would (`--sid` repeats an earlier message id: a provider's replay, which changes nothing).
 */
export async function receiveSms(
  state: StackState,
  input: { from: string; to: string; body: string; sid?: string },
): Promise<InboundSms> {
  for (const name of ['from', 'to'] as const) {
    if (!isE164(input[name]))
      throw new Error(`--${name} must be a phone number in E.164 format (+61…): ${input[name]}`);
  }
  const url = state.env.SMS_SIMULATOR_URL;
  const token = state.env.TELEPHONY_AUTH_TOKEN;
  if (!url || !token) throw new Error('The local stack runs no SMS simulator (SMS_SIMULATOR_URL)');
  const response = await fetch(`${url.replace(/\/$/, '')}/inbound`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`the SMS simulator refused the message: ${response.status} ${text}`);
  return JSON.parse(text) as InboundSms;
}

export function describeInboundSms(sms: InboundSms, input: { from: string; to: string }): string {
  return sms.http_status === 200
    ? `delivered ${sms.sid} from ${input.from} to ${input.to}: it is in the workspace's SMS inbox (GET …/sms-inbox) if ${input.to} is one of its numbers`
    : `the SMS webhook answered ${sms.http_status} for ${sms.sid}`;
}
