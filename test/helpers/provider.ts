import { signTwilioRequest, SIGNATURE_HEADER } from '../../functions/providers/telephony/twilio-format.js';
import { stackState } from './stack-state.js';

/**
 * A form POST to one of our telephony webhooks as Twilio sends it: signed with the stack's auth token
 * (unless `signed` is false, for the 401 cases).
 */
export async function postProviderForm(
  url: string,
  params: Record<string, string>,
  signed = true,
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signed
        ? { [SIGNATURE_HEADER]: signTwilioRequest(stackState().env.TELEPHONY_AUTH_TOKEN, url, params) }
        : {}),
    },
    body: new URLSearchParams(params).toString(),
  });
}
