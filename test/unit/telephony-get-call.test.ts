import { TelephonyError } from '../../functions/providers/telephony/port.js';
import { callState } from '../../functions/providers/telephony/twilio-format.js';
import { TwilioTelephony, type TwilioSecret } from '../../functions/providers/telephony/twilio-adapter.js';

/**
 * The telephony port's `getCall`: how the sweeper asks the provider about a call whose callbacks
 * stopped coming. Twilio's Call resource (`GET /2010-04-01/Accounts/{sid}/Calls/{CallSid}.json`)
 * mapped to our statuses; a call Twilio does not know is undefined, a failure to ask is an error.
 */

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const SECRET: TwilioSecret = {
  account_sid: SID,
  auth_token: 'a-test-auth-token-123',
};

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function answer(status: number, body?: unknown): { url?: string; method?: string; authorization?: string } {
  const seen: { url?: string; method?: string; authorization?: string } = {};
  globalThis.fetch = (async (input: string | URL, init?: RequestInit) => {
    seen.url = String(input);
    seen.method = init?.method ?? 'GET';
    seen.authorization = new Headers(init?.headers).get('authorization') ?? undefined;
    return new Response(body === undefined ? null : JSON.stringify(body), { status });
  }) as typeof fetch;
  return seen;
}

describe("Twilio's Call resource → our call state", () => {
  it('maps statuses, and gives the duration and end only once the call ended', () => {
    expect(callState({ status: 'queued' })).toEqual({ status: 'initiated' });
    expect(callState({ status: 'ringing' })).toEqual({ status: 'initiated' });
    expect(callState({ status: 'in-progress', duration: null, end_time: null })).toEqual({
      status: 'connected',
    });
    expect(
      callState({ status: 'completed', duration: '42', end_time: 'Tue, 10 Aug 2010 08:02:31 +0000' }),
    ).toEqual({
      status: 'completed',
      endReason: 'completed',
      durationSeconds: 42,
      endedAt: '2010-08-10T08:02:31.000Z',
    });
    expect(callState({ status: 'busy', duration: '0' })).toMatchObject({
      status: 'failed',
      endReason: 'busy',
      durationSeconds: 0,
    });
    expect(callState({ status: 'no-answer' })).toMatchObject({ status: 'failed', endReason: 'no_answer' });
    expect(callState({ status: 'canceled' })).toMatchObject({ status: 'failed', endReason: 'canceled' });
    // A status we do not know leaves the call alone (no status), never "unknown call".
    expect(callState({ status: 'exploded' })).toEqual({});
  });
});

describe('TwilioTelephony.getCall', () => {
  const telephony = () => new TwilioTelephony(async () => SECRET);

  it("GETs the Call resource with the account's basic auth", async () => {
    const seen = answer(200, {
      sid: 'CA123',
      status: 'completed',
      duration: '60',
      end_time: 'Tue, 10 Aug 2010 08:02:31 +0000',
    });
    await expect(telephony().getCall('CA123')).resolves.toEqual({
      status: 'completed',
      endReason: 'completed',
      durationSeconds: 60,
      endedAt: '2010-08-10T08:02:31.000Z',
    });
    expect(seen).toEqual({
      url: `https://api.twilio.com/2010-04-01/Accounts/${SID}/Calls/CA123.json`,
      method: 'GET',
      authorization: `Basic ${Buffer.from(`${SID}:${SECRET.auth_token}`).toString('base64')}`,
    });
  });

  it('a call Twilio does not know (404) is undefined', async () => {
    answer(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
    await expect(telephony().getCall('CAgone')).resolves.toBeUndefined();
  });

  it('a failure to ask is an error, not "unknown" (a 5xx is not definitive)', async () => {
    answer(503, { message: 'Service unavailable' });
    const error = await telephony()
      .getCall('CA123')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TelephonyError);
    expect((error as TelephonyError).definitive).toBe(false);
  });
});
