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

/**
 * The local telephony provider: a client of the simulator service the local stack runs
 * (`lib/local/simulators/telephony/server.ts`, registered by lib/local/services/). Like
 * Twilio's REST API it provisions numbers and places calls, then plays each call out through our real
 * status-callback webhook, signed with the shared auth token.
 */
export class SimulatorTelephony implements TelephonyPort {
  readonly name = 'simulator' as const;
  readonly callSecondsPerWallSecond: number;

  constructor(
    private readonly options: {
      /** Simulated call seconds per wall-clock second (SIMULATOR_TIME_SCALE). */
      timeScale?: number;
      /** Base URL of the simulator service; unset when it is not running (e.g. in the cloud). */
      baseUrl?: string;
      /** The token callbacks are signed with; without one, every signature is refused. */
      authToken?: string;
    },
  ) {
    this.callSecondsPerWallSecond = options.timeScale ?? 1;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const result = await this.send<T>(method, path, body, false);
    return result as T;
  }

  /** Like request(), but a 404 answers undefined instead of throwing (a lookup of something unknown). */
  private async lookup<T>(path: string): Promise<T | undefined> {
    return this.send<T>('GET', path, undefined, true);
  }

  private async send<T>(
    method: string,
    path: string,
    body: unknown,
    notFoundIsUndefined: boolean,
  ): Promise<T | undefined> {
    const base = this.options.baseUrl;
    if (!base) {
      throw new TelephonyError(
        'The telephony simulator is not running (TELEPHONY_SIMULATOR_URL is unset); use TELEPHONY_PROVIDER=twilio in the cloud',
        true,
      );
    }
    let response: Response;
    try {
      response = await fetch(`${base.replace(/\/$/, '')}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(this.options.authToken ? { authorization: `Bearer ${this.options.authToken}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      });
    } catch (error) {
      // The request may or may not have reached the simulator.
      throw new TelephonyError(`telephony simulator did not answer ${method} ${path}`, false, {
        cause: error,
      });
    }
    const text = await response.text();
    if (response.status === 404 && notFoundIsUndefined) return undefined;
    if (!response.ok) {
      throw new TelephonyError(
        `telephony simulator refused ${method} ${path}: ${response.status} ${text.slice(0, 200)}`,
        response.status < 500,
      );
    }
    return (text ? JSON.parse(text) : {}) as T;
  }

  async provisionNumber(request: ProvisionRequest): Promise<ProvisionedNumber> {
    const result = await this.request<{ phone_number: string; sid: string }>('POST', '/numbers', {
      country: request.country,
      area_code: request.areaCode,
      phone_number: request.phoneNumber,
      voice_url: request.voiceUrl,
      status_callback: request.statusCallbackUrl,
    });
    return { phoneNumber: result.phone_number, providerNumberId: result.sid };
  }

  async releaseNumber(providerNumberId: string): Promise<void> {
    await this.request('DELETE', `/numbers/${encodeURIComponent(providerNumberId)}`);
  }

  async placeCall(request: PlaceCallRequest): Promise<{ providerCallId: string }> {
    const result = await this.request<{ sid: string }>('POST', '/calls', {
      from: request.from,
      to: request.to,
      status_callback: request.statusCallbackUrl,
      status_callback_event: request.statusCallbackEvents,
      time_limit: request.maxDurationSeconds,
      twiml: callTwiml(request.script),
      ...(request.machineDetection
        ? {
            machine_detection: request.machineDetection.mode,
            async_amd: true,
            async_amd_status_callback: request.machineDetection.callbackUrl,
          }
        : {}),
    });
    return { providerCallId: result.sid };
  }

  async hangupCall(providerCallId: string): Promise<HangupResult> {
    const result = await this.request<{ ended_at?: string; duration_seconds?: number }>(
      'POST',
      `/calls/${encodeURIComponent(providerCallId)}/hangup`,
    );
    return { endedAt: result.ended_at, durationSeconds: result.duration_seconds };
  }

  /** The call's own scale, as the simulator plays it (1 for `call talk`); the stack's when it cannot tell. */
  async callSecondsPerWallSecondOf(providerCallId: string): Promise<number> {
    const call = await this.lookup<{ time_scale?: number }>(
      `/calls/${encodeURIComponent(providerCallId)}`,
      // A call the simulator does not know (restarted, or another's): the stack's scale, as documented above.
    ).catch(() => {
      // Unknown to the simulator (restarted, or another stack's call): the stack's scale, as documented.
      return undefined;
    });
    return typeof call?.time_scale === 'number' && call.time_scale > 0
      ? call.time_scale
      : this.callSecondsPerWallSecond;
  }

  /** The simulator's view of the call, Twilio's Call resource fields; a call it forgot (a restart) is 404. */
  async getCall(providerCallId: string): Promise<ProviderCallState | undefined> {
    const call = await this.lookup<{ status?: string; duration?: string | null; end_time?: string | null }>(
      `/calls/${encodeURIComponent(providerCallId)}`,
    );
    return call ? callState(call) : undefined;
  }

  async answerTwiml(script: CallScript): Promise<string> {
    return callTwiml(script);
  }

  async verifySignature(
    url: string,
    params: Record<string, string>,
    signature: string | undefined,
  ): Promise<boolean> {
    return validTwilioSignature(this.options.authToken ?? '', url, params, signature);
  }

  async fetchRecording(recordingUrl: string): Promise<Uint8Array> {
    const base = this.options.baseUrl;
    // Only the simulator's own recordings are fetched (a callback cannot point us anywhere else).
    if (!base || !recordingUrl.startsWith(`${base.replace(/\/$/, '')}/recordings/`)) {
      throw new TelephonyError(`recording URL is not the simulator's: ${recordingUrl}`, true);
    }
    const response = await fetch(recordingUrl, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok)
      throw new TelephonyError(`recording download failed: ${response.status}`, response.status < 500);
    return new Uint8Array(await response.arrayBuffer());
  }
}
