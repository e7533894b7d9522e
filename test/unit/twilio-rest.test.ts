import twilio from 'twilio';
import { TelephonyError } from '../../functions/providers/telephony/port.js';
import { callTwiml } from '../../functions/providers/telephony/twilio-format.js';
import { TwilioTelephony, type TwilioSecret } from '../../functions/providers/telephony/twilio-adapter.js';
import { TwilioRestError } from '../../functions/providers/telephony/twilio-rest.js';
import { SmsSendError } from '../../functions/providers/sms/port.js';
import { TwilioSmsSender } from '../../functions/providers/sms/twilio.js';
import { STATUS_CALLBACK_EVENTS } from '../../functions/calling/dispatch.js';

/**
 * The Twilio adapters call Twilio's REST API with fetch (not the `twilio` library, ~3 MB per bundle).
 * Each request is checked against the one the official library sends for the same call (its HTTP
 * client replaced by a recorder): same method, URL, query and form parameters, with basic auth.
 */

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TOKEN = 'a-test-auth-token-123';
const SECRET: TwilioSecret = {
  account_sid: SID,
  auth_token: TOKEN,
};

interface Sent {
  method: string;
  /** Origin and path, no query. */
  url: string;
  /** Query and form parameters, each as sent (lists repeated), sorted by name. */
  query: [string, string][];
  form: [string, string][];
  authorization?: string;
}

const sorted = (params: URLSearchParams): [string, string][] =>
  [...params.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** What the official library sends: its HTTP client is a recorder answering `answer`. */
async function librarySends(
  call: (client: ReturnType<typeof twilio>) => Promise<unknown>,
  ...answers: { status: number; body: unknown }[]
): Promise<Sent[]> {
  const sent: Sent[] = [];
  const httpClient = {
    request: async (opts: {
      method: string;
      uri: string;
      username: string;
      password: string;
      params?: Record<string, unknown>;
      data?: Record<string, unknown>;
    }) => {
      const encode = (values?: Record<string, unknown>) => {
        const out = new URLSearchParams();
        for (const [name, value] of Object.entries(values ?? {})) {
          for (const item of Array.isArray(value) ? value : [value]) out.append(name, String(item));
        }
        return out;
      };
      sent.push({
        method: opts.method.toUpperCase(),
        url: opts.uri,
        query: sorted(encode(opts.params)),
        form: sorted(encode(opts.data)),
        authorization: `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`,
      });
      const answer = answers.shift() ?? { status: 200, body: {} };
      return { statusCode: answer.status, body: JSON.stringify(answer.body), headers: {} };
    },
  };
  await call(twilio(SID, TOKEN, { httpClient: httpClient as never }));
  return sent;
}

/** What the adapters send: fetch is replaced by a recorder answering from `answers` in turn. */
function recordFetch(...answers: { status: number; body?: unknown }[]): Sent[] {
  const sent: Sent[] = [];
  globalThis.fetch = (async (input: string | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    sent.push({
      method: init?.method ?? 'GET',
      url: `${url.origin}${url.pathname}`,
      query: sorted(url.searchParams),
      form: sorted(new URLSearchParams(typeof init?.body === 'string' ? init.body : '')),
      authorization: headers.get('authorization') ?? undefined,
    });
    if (init?.method === 'POST') {
      expect(headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    }
    const answer = answers.shift() ?? { status: 200, body: {} };
    const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
    return new Response(answer.status === 204 ? null : text, { status: answer.status });
  }) as typeof fetch;
  return sent;
}

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const telephony = (secret: TwilioSecret = SECRET) => new TwilioTelephony(async () => secret);
const script = {
  callId: 'call_1',
  workspaceId: 'ws_1',
  greeting: 'Hi & welcome',
  record: true,
  recordingCallbackUrl: 'https://hooks.example.com/voice?call_id=call_1&event=recording',
  relay: {
    url: 'wss://relay.example.com/live',
    actionUrl: 'https://hooks.example.com/relay-ended?call_id=call_1&workspace_id=ws_1',
    language: 'en-AU',
    interruptible: true,
    hints: [],
  },
};

describe('Twilio telephony over REST', () => {
  it('places a call as the library does', async () => {
    const request = {
      from: '+61255501234',
      to: '+61491570156',
      statusCallbackUrl: 'https://hooks.example.com/voice?call_id=call_1&workspace_id=ws_1',
      statusCallbackEvents: STATUS_CALLBACK_EVENTS,
      maxDurationSeconds: 900,
      script,
    };
    const sent = recordFetch({ status: 201, body: { sid: 'CA123' } });
    await expect(telephony().placeCall(request)).resolves.toEqual({ providerCallId: 'CA123' });
    const expected = await librarySends((client) =>
      client.calls.create({
        to: request.to,
        from: request.from,
        twiml: callTwiml(script),
        statusCallback: request.statusCallbackUrl,
        statusCallbackMethod: 'POST',
        // What the dispatcher subscribes to: the answer and the end (dispatch.ts).
        statusCallbackEvent: ['answered', 'completed'],
        timeLimit: 900,
      }),
    );
    expect(sent).toEqual(expected);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      url: `https://api.twilio.com/2010-04-01/Accounts/${SID}/Calls.json`,
      authorization: `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`,
    });
    expect(sent[0].form.filter(([name]) => name === 'StatusCallbackEvent')).toHaveLength(2);
  });

  it('hangs up as the library does', async () => {
    const sent = recordFetch({ status: 200, body: { sid: 'CA123', status: 'completed' } });
    await expect(telephony().hangupCall('CA123')).resolves.toEqual({});
    expect(sent).toEqual(
      await librarySends((client) => client.calls('CA123').update({ status: 'completed' })),
    );
  });

  it('finds and buys a number as the library does, with the address and bundle when configured', async () => {
    const secret = { ...SECRET, address_sid: 'AD1', bundle_sid: 'BU1' };
    const request = {
      country: 'AU',
      areaCode: '2',
      voiceUrl: 'https://hooks.example.com/voice?event=incoming',
      statusCallbackUrl: 'https://hooks.example.com/voice',
    };
    const sent = recordFetch(
      { status: 200, body: { available_phone_numbers: [{ phone_number: '+61255501234' }] } },
      { status: 201, body: { sid: 'PN1', phone_number: '+61255501234' } },
    );
    await expect(telephony(secret).provisionNumber(request)).resolves.toEqual({
      phoneNumber: '+61255501234',
      providerNumberId: 'PN1',
    });
    const expected = await librarySends(
      async (client) => {
        await client.availablePhoneNumbers('AU').local.list({ voiceEnabled: true, limit: 1, areaCode: 2 });
        await client.incomingPhoneNumbers.create({
          phoneNumber: '+61255501234',
          voiceUrl: request.voiceUrl,
          voiceMethod: 'POST',
          statusCallback: request.statusCallbackUrl,
          statusCallbackMethod: 'POST',
          addressSid: 'AD1',
          bundleSid: 'BU1',
        });
      },
      { status: 200, body: { available_phone_numbers: [{ phone_number: '+61255501234' }] } },
    );
    expect(sent).toEqual(expected);
    expect(sent[0].method).toBe('GET');

    // A given number, no address or bundle: no search, and neither parameter is sent.
    const direct = recordFetch({ status: 201, body: { sid: 'PN2', phone_number: '+61255509999' } });
    await telephony().provisionNumber({ ...request, phoneNumber: '+61255509999' });
    expect(direct).toHaveLength(1);
    expect(direct[0].form.map(([name]) => name)).toEqual([
      'PhoneNumber',
      'StatusCallback',
      'StatusCallbackMethod',
      'VoiceMethod',
      'VoiceUrl',
    ]);
  });

  it('refuses when no number is available', async () => {
    recordFetch({ status: 200, body: { available_phone_numbers: [] } });
    await expect(
      telephony().provisionNumber({
        country: 'AU',
        voiceUrl: 'https://x/v',
        statusCallbackUrl: 'https://x/s',
      }),
    ).rejects.toMatchObject({ definitive: true, message: 'No number is available with those criteria' });
  });

  it('releases a number as the library does; one already gone is released', async () => {
    const sent = recordFetch({ status: 204 });
    await telephony().releaseNumber('PN1');
    expect(sent).toEqual(await librarySends((client) => client.incomingPhoneNumbers('PN1').remove()));
    expect(sent[0].method).toBe('DELETE');

    recordFetch({ status: 404, body: { code: 20404, message: 'not found', status: 404 } });
    await expect(telephony().releaseNumber('PN1')).resolves.toBeUndefined();
    recordFetch({ status: 503, body: { message: 'unavailable' } });
    await expect(telephony().releaseNumber('PN1')).rejects.toMatchObject({ definitive: false });
  });

  it('maps refusals and failures as before: 4xx definitive, 5xx and network failures not', async () => {
    const request = {
      from: '+61255501234',
      to: '+61491570156',
      statusCallbackUrl: 'https://x/s',
      statusCallbackEvents: STATUS_CALLBACK_EVENTS,
      maxDurationSeconds: 60,
      script,
    };
    recordFetch({ status: 400, body: { code: 21211, message: "The 'To' number is not valid", status: 400 } });
    const refused = await telephony()
      .placeCall(request)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TelephonyError);
    expect(refused).toMatchObject({
      definitive: true,
      message: "Twilio call failed (400): The 'To' number is not valid",
    });
    expect((refused as TelephonyError).cause).toMatchObject({ status: 400, code: 21211 });

    recordFetch({ status: 500, body: 'not json' });
    await expect(telephony().placeCall(request)).rejects.toMatchObject({ definitive: false });

    globalThis.fetch = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    await expect(telephony().placeCall(request)).rejects.toMatchObject({
      definitive: false,
      message: 'Twilio call failed: fetch failed',
    });
  });

  it('reports a refusal without a JSON body as the library does', () => {
    expect(new TwilioRestError(502, undefined).message).toBe('[HTTP 502] Failed to execute request');
  });
});

describe('Twilio SMS over REST', () => {
  const sender = (defaultFrom?: string) =>
    new TwilioSmsSender(async () => ({ accountSid: SID, authToken: TOKEN, defaultFrom }));

  it('sends from a number, or through a messaging service, as the library does', async () => {
    const sent = recordFetch({ status: 201, body: { sid: 'SM1' } }, { status: 201, body: { sid: 'SM2' } });
    await expect(
      sender().send({ to: '+61491570156', from: '+61255501234', text: 'Hi & bye', idempotencyKey: 'k1' }),
    ).resolves.toEqual({ messageId: 'SM1', duplicate: false });
    await expect(
      sender('MG0123').send({ to: '+61491570156', text: 'Hello', idempotencyKey: 'k2' }),
    ).resolves.toEqual({ messageId: 'SM2', duplicate: false });
    const expected = await librarySends(async (client) => {
      await client.messages.create({ to: '+61491570156', body: 'Hi & bye', from: '+61255501234' });
      await client.messages.create({ to: '+61491570156', body: 'Hello', messagingServiceSid: 'MG0123' });
    });
    expect(sent).toEqual(expected);
    expect(sent[0].url).toBe(`https://api.twilio.com/2010-04-01/Accounts/${SID}/Messages.json`);
  });

  it('is permanent on a 4xx other than 429', async () => {
    const message = { to: '+61491570156', from: '+61255501234', text: 'x', idempotencyKey: 'k' };
    recordFetch({ status: 400, body: { code: 21610, message: 'unsubscribed recipient' } });
    const refused = await sender()
      .send(message)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SmsSendError);
    expect(refused).toMatchObject({
      permanent: true,
      message: 'Twilio refused the message: unsubscribed recipient',
    });
    recordFetch({ status: 429, body: { message: 'too many' } });
    await expect(sender().send(message)).rejects.toMatchObject({ permanent: false });
    recordFetch({ status: 503 });
    await expect(sender().send(message)).rejects.toMatchObject({ permanent: false });
  });
});
