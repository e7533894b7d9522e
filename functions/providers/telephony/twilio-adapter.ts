import * as z from 'zod';
import { secretArnEnv, secretString } from '../../platform/secrets.js';
import {
  TelephonyError,
  type CallScript,
  type HangupResult,
  type PlaceCallRequest,
  type ProviderCallState,
  type ProvisionedNumber,
  type ProvisionRequest,
  type TelephonyPort,
} from './port.js';
import { callState, callTwiml, validTwilioSignature } from './twilio-format.js';
import { twilioBasicAuth, twilioRequest, type TwilioAccount } from './twilio-rest.js';
import { schemaOnFirstUse } from '../../platform/first-use.js';

/**
 * The Twilio secret (Secrets Manager, ARN in SECRET_ARN_TELEPHONY), put by the operator as JSON:
 * `{ "account_sid": "AC…", "auth_token": "…", "address_sid"?: "AD…", "bundle_sid"?: "BU…" }`
 * (the voice relay's URL is the stack's own WebSocket API, given to the functions as VOICE_RELAY_URL) — Australian numbers need a regulatory address
 * and bundle on the Twilio account.
 */
export const TwilioSecret = schemaOnFirstUse(() =>
  z.object({
    account_sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/),
    auth_token: z.string().min(16),
    address_sid: z.string().optional(),
    bundle_sid: z.string().optional(),
  }),
);
export type TwilioSecret = z.infer<typeof TwilioSecret>;

/**
 * The telephony secret, read once per container through platform/secrets.ts (lazily: only functions
 * that use the provider pay for it; a failed read or a bad secret is tried again on the next call).
 */
export async function loadTwilioSecret(): Promise<TwilioSecret> {
  if (!process.env[secretArnEnv('telephony')])
    throw new TelephonyError(`${secretArnEnv('telephony')} is not set for this function`, true);
  return TwilioSecret.parse(JSON.parse(await secretString('telephony')));
}

/** Twilio's REST API (`twilio-rest.ts`); callbacks are checked with the account's auth token. */
export class TwilioTelephony implements TelephonyPort {
  readonly name = 'twilio' as const;
  /** A call's seconds and the wall clock's are the same. */
  readonly callSecondsPerWallSecond = 1;

  async callSecondsPerWallSecondOf(): Promise<number> {
    return 1;
  }
  private connection: Promise<{ account: TwilioAccount; secret: TwilioSecret }> | undefined;

  constructor(private readonly loadSecret: () => Promise<TwilioSecret>) {}

  private connect() {
    this.connection ??= this.loadSecret().then((secret) => ({
      account: { accountSid: secret.account_sid, authToken: secret.auth_token },
      secret,
    }));
    this.connection.catch(() => {
      this.connection = undefined;
    });
    return this.connection;
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
    const { account, secret } = await this.connect();
    let phoneNumber = request.phoneNumber;
    try {
      if (!phoneNumber) {
        const available = await twilioRequest<{ available_phone_numbers?: { phone_number: string }[] }>(
          account,
          'GET',
          `/AvailablePhoneNumbers/${encodeURIComponent(request.country)}/Local.json`,
          {
            VoiceEnabled: true,
            PageSize: 1,
            ...(request.areaCode ? { AreaCode: Number(request.areaCode) } : {}),
          },
        );
        phoneNumber = available?.available_phone_numbers?.[0]?.phone_number;
        if (!phoneNumber) throw new TelephonyError('No number is available with those criteria', true);
      }
      const bought = await twilioRequest<{ sid: string; phone_number: string }>(
        account,
        'POST',
        '/IncomingPhoneNumbers.json',
        {
          PhoneNumber: phoneNumber,
          VoiceUrl: request.voiceUrl,
          VoiceMethod: 'POST',
          StatusCallback: request.statusCallbackUrl,
          StatusCallbackMethod: 'POST',
          AddressSid: secret.address_sid,
          BundleSid: secret.bundle_sid,
        },
      );
      return { phoneNumber: bought.phone_number, providerNumberId: bought.sid };
    } catch (error) {
      throw error instanceof TelephonyError ? error : TwilioTelephony.wrap(error, 'number purchase');
    }
  }

  async releaseNumber(providerNumberId: string): Promise<void> {
    const { account } = await this.connect();
    try {
      await twilioRequest(
        account,
        'DELETE',
        `/IncomingPhoneNumbers/${encodeURIComponent(providerNumberId)}.json`,
      );
    } catch (error) {
      if ((error as { status?: number }).status === 404) return; // already released
      throw TwilioTelephony.wrap(error, 'number release');
    }
  }

  async placeCall(request: PlaceCallRequest): Promise<{ providerCallId: string }> {
    const { account } = await this.connect();
    try {
      const call = await twilioRequest<{ sid: string }>(account, 'POST', '/Calls.json', {
        To: request.to,
        From: request.from,
        Twiml: callTwiml(request.script),
        StatusCallback: request.statusCallbackUrl,
        StatusCallbackMethod: 'POST',
        StatusCallbackEvent: [...request.statusCallbackEvents],
        TimeLimit: request.maxDurationSeconds,
        ...(request.machineDetection
          ? {
              MachineDetection: request.machineDetection.mode,
              AsyncAmd: 'true',
              AsyncAmdStatusCallback: request.machineDetection.callbackUrl,
              AsyncAmdStatusCallbackMethod: 'POST',
            }
          : {}),
      });
      return { providerCallId: call.sid };
    } catch (error) {
      throw TwilioTelephony.wrap(error, 'call');
    }
  }

  async hangupCall(providerCallId: string): Promise<HangupResult> {
    const { account } = await this.connect();
    try {
      await twilioRequest(account, 'POST', `/Calls/${encodeURIComponent(providerCallId)}.json`, {
        Status: 'completed',
      });
      return {};
    } catch (error) {
      throw TwilioTelephony.wrap(error, 'hangup');
    }
  }

  /** Twilio's Call resource (`GET /Calls/{CallSid}.json`): status, and duration and end once ended. */
  async getCall(providerCallId: string): Promise<ProviderCallState | undefined> {
    const { account } = await this.connect();
    try {
      const call = await twilioRequest<{
        status?: string;
        duration?: string | null;
        end_time?: string | null;
      }>(account, 'GET', `/Calls/${encodeURIComponent(providerCallId)}.json`);
      return callState(call ?? {});
    } catch (error) {
      if ((error as { status?: number }).status === 404) return undefined; // Twilio does not know it
      throw TwilioTelephony.wrap(error, 'call lookup');
    }
  }

  answerTwiml(script: CallScript): Promise<string> {
    return Promise.resolve(callTwiml(script));
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
    const { account } = await this.connect();
    const url = new URL(recordingUrl.endsWith('.wav') ? recordingUrl : `${recordingUrl}.wav`);
    // Only Twilio's API host: a callback cannot make us send the account credentials elsewhere.
    if (url.protocol !== 'https:' || url.hostname !== 'api.twilio.com') {
      throw new TelephonyError(`recording URL is not Twilio's: ${recordingUrl}`, true);
    }
    const response = await fetch(url, {
      headers: { authorization: twilioBasicAuth(account) },
      signal: AbortSignal.timeout(20_000),
    });
    if (!response.ok)
      throw new TelephonyError(`Twilio recording download failed: ${response.status}`, response.status < 500);
    return new Uint8Array(await response.arrayBuffer());
  }
}
