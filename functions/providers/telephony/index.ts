import * as z from 'zod';
import type { TelephonyPort } from './port.js';
import { SimulatorTelephony } from './simulator-adapter.js';
import { loadTwilioSecret, TwilioTelephony } from './twilio-adapter.js';
import { schemaOnFirstUse } from '../../platform/first-use.js';

export * from './port.js';

/** Our webhook for call status callbacks, recording callbacks and inbound calls (a function URL). */
export const VOICE_WEBHOOK_PATH = '/webhooks/telephony/voice' as const;

/** The auth token the local simulator signs callbacks with when TELEPHONY_AUTH_TOKEN is not set. */
export const LOCAL_TELEPHONY_AUTH_TOKEN = 'local-telephony-auth-token';

const TelephonyConfig = schemaOnFirstUse(() =>
  z.object({
    STAGE: z.enum(['local', 'cloud']).default('local'),
    TELEPHONY_PROVIDER: z.enum(['simulator', 'twilio']).default('simulator'),
    /** Set by the local stack's telephony simulator service. */
    TELEPHONY_SIMULATOR_URL: z.string().optional(),
    /** The simulator's signing token; locally it defaults to LOCAL_TELEPHONY_AUTH_TOKEN, in the cloud to none. */
    TELEPHONY_AUTH_TOKEN: z.string().min(8).optional(),
  }),
);

let port: TelephonyPort | undefined;

/** The configured adapter, built once per container. */
export function telephony(): TelephonyPort {
  if (!port) {
    const env = TelephonyConfig.parse(process.env);
    port =
      env.TELEPHONY_PROVIDER === 'twilio'
        ? new TwilioTelephony(loadTwilioSecret)
        : new SimulatorTelephony({
            timeScale:
              Number(process.env.SIMULATOR_TIME_SCALE) > 0 ? Number(process.env.SIMULATOR_TIME_SCALE) : 1,
            baseUrl: env.TELEPHONY_SIMULATOR_URL,
            authToken:
              env.TELEPHONY_AUTH_TOKEN ?? (env.STAGE === 'local' ? LOCAL_TELEPHONY_AUTH_TOKEN : undefined),
          });
  }
  return port;
}

/** Replace the adapter (tests of the port itself); `undefined` goes back to the configured one. */
export function setTelephony(next: TelephonyPort | undefined): void {
  port = next;
}
