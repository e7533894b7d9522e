import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import * as z from 'zod';
import {
  TelephonyError,
  type CallScript,
  type HangupResult,
  type PlaceCallRequest,
  type ProvisionedNumber,
  type ProvisionRequest,
  type TelephonyPort,
} from './port.js';
import { callTwiml, validTwilioSignature } from './twilio-format.js';

/**
 * The Twilio secret (Secrets Manager, ARN in SECRET_ARN_TELEPHONY), put by the operator as JSON:
 * `{ "account_sid": "AC…", "auth_token": "…", "voice_runtime_url": "wss://…",
 *    "address_sid"?: "AD…", "bundle_sid"?: "BU…" }` — Australian numbers need a regulatory address
 * and bundle on the Twilio account.
 */
export const TwilioSecret = z.object({
  account_sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/),
  auth_token: z.string().min(16),
  voice_runtime_url: z.string().url(),
  address_sid: z.string().optional(),
  bundle_sid: z.string().optional(),
});
export type TwilioSecret = z.infer<typeof TwilioSecret>;

/** Reads the secret once per container (lazily: only functions that use the provider pay for it). */
export function secretsManagerLoader(
  secretArn: string | undefined,
  region: string,
): () => Promise<TwilioSecret> {
  let loaded: Promise<TwilioSecret> | undefined;
  return () => {
    if (!secretArn)
      return Promise.reject(new TelephonyError('SECRET_ARN_TELEPHONY is not set for this function', true));
    loaded ??= new SecretsManagerClient({ region })
      .send(new GetSecretValueCommand({ SecretId: secretArn }))
      .then((result) => TwilioSecret.parse(JSON.parse(result.SecretString ?? '{}')));
    loaded.catch(() => {
      loaded = undefined; // a fixed secret is picked up on the next call
    });
    return loaded;
  };
}

type TwilioClient = ReturnType<typeof import('twilio')>;

/** Twilio's REST API through the official library; callbacks are checked with the account's auth token. */
export class TwilioTelephony implements TelephonyPort {
  readonly name = 'twilio' as const;
  /** Twilio itself reports no transcript; the voice runtime behind `voice_runtime_url` would. */
  readonly sendsTranscripts = false;
  private client: Promise<{ client: TwilioClient; secret: TwilioSecret }> | undefined;

  constructor(private readonly loadSecret: () => Promise<TwilioSecret>) {}

  private connect() {
    this.client ??= (async () => {
      const secret = await this.loadSecret();
      const { default: twilio } = await import('twilio');
      return { client: twilio(secret.account_sid, secret.auth_token), secret };
    })();
    this.client.catch(() => {
      this.client = undefined;
    });
    return this.client;
  }

  private static wrap(error: unknown, what: string): TelephonyError {
    const status = (error as { status?: number }).status;
    return new TelephonyError(
      `Twilio ${what} failed${status ? ` (${status})` : ''}: ${String((error as Error).message ?? error)}`,
      status !== undefined && status < 500,
      {
        cause: error,
      },
    );
  }

  async provisionNumber(request: ProvisionRequest): Promise<ProvisionedNumber> {
    const { client, secret } = await this.connect();
    let phoneNumber = request.phoneNumber;
    try {
      if (!phoneNumber) {
        const available = await client.availablePhoneNumbers(request.country).local.list({
          voiceEnabled: true,
          limit: 1,
          ...(request.areaCode ? { areaCode: Number(request.areaCode) } : {}),
        });
        phoneNumber = available[0]?.phoneNumber;
        if (!phoneNumber) throw new TelephonyError('No number is available with those criteria', true);
      }
      const bought = await client.incomingPhoneNumbers.create({
        phoneNumber,
        voiceUrl: request.voiceUrl,
        voiceMethod: 'POST',
        statusCallback: request.statusCallbackUrl,
        statusCallbackMethod: 'POST',
        ...(secret.address_sid ? { addressSid: secret.address_sid } : {}),
        ...(secret.bundle_sid ? { bundleSid: secret.bundle_sid } : {}),
      });
      return { phoneNumber: bought.phoneNumber, providerNumberId: bought.sid };
    } catch (error) {
      throw error instanceof TelephonyError ? error : TwilioTelephony.wrap(error, 'number purchase');
    }
  }

  async releaseNumber(providerNumberId: string): Promise<void> {
    const { client } = await this.connect();
    try {
      await client.incomingPhoneNumbers(providerNumberId).remove();
    } catch (error) {
      if ((error as { status?: number }).status === 404) return; // already released
      throw TwilioTelephony.wrap(error, 'number release');
    }
  }

  async placeCall(request: PlaceCallRequest): Promise<{ providerCallId: string }> {
    const { client, secret } = await this.connect();
    try {
      const call = await client.calls.create({
        to: request.to,
        from: request.from,
        twiml: callTwiml(request.script, secret.voice_runtime_url),
        statusCallback: request.statusCallbackUrl,
        statusCallbackMethod: 'POST',
        statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        timeLimit: request.maxDurationSeconds,
      });
      return { providerCallId: call.sid };
    } catch (error) {
      throw TwilioTelephony.wrap(error, 'call');
    }
  }

  async hangupCall(providerCallId: string): Promise<HangupResult> {
    const { client } = await this.connect();
    try {
      await client.calls(providerCallId).update({ status: 'completed' });
      return {};
    } catch (error) {
      throw TwilioTelephony.wrap(error, 'hangup');
    }
  }

  async answerTwiml(script: CallScript): Promise<string> {
    const { secret } = await this.connect();
    return callTwiml(script, secret.voice_runtime_url);
  }

  async verifySignature(
    url: string,
    params: Record<string, string>,
    signature: string | undefined,
  ): Promise<boolean> {
    const { secret } = await this.connect();
    return validTwilioSignature(secret.auth_token, url, params, signature);
  }

  async fetchRecording(recordingUrl: string): Promise<Uint8Array> {
    const { secret } = await this.connect();
    const url = new URL(recordingUrl.endsWith('.wav') ? recordingUrl : `${recordingUrl}.wav`);
    // Only Twilio's API host: a callback cannot make us send the account credentials elsewhere.
    if (url.protocol !== 'https:' || url.hostname !== 'api.twilio.com') {
      throw new TelephonyError(`recording URL is not Twilio's: ${recordingUrl}`, true);
    }
    const response = await fetch(url, {
      headers: {
        authorization: `Basic ${Buffer.from(`${secret.account_sid}:${secret.auth_token}`).toString('base64')}`,
      },
      signal: AbortSignal.timeout(20_000),
    });
    if (!response.ok)
      throw new TelephonyError(`Twilio recording download failed: ${response.status}`, response.status < 500);
    return new Uint8Array(await response.arrayBuffer());
  }
}
