import * as z from 'zod';
import { logger } from '../../platform/logger.js';
import { secretString } from '../../platform/secrets.js';
import { LocalOutboxSmsSender } from './local-outbox.js';
import { SmsSendError, type SmsMessage, type SmsReceipt, type SmsSender } from './port.js';
import { LOCAL_TELEPHONY_AUTH_TOKEN } from '../telephony/index.js';
import { SimulatorSmsSender } from './simulator.js';
import { TwilioSmsSender, type TwilioCredentials } from './twilio.js';
import { schemaOnFirstUse } from '../../platform/first-use.js';

export { SmsSendError, type SmsMessage, type SmsReceipt, type SmsSender } from './port.js';

const SmsConfig = schemaOnFirstUse(() =>
  z.object({
    STAGE: z.enum(['local', 'cloud']).default('local'),
    /**
     * `local`: the outbox file; `simulator`: the local SMS simulator (SMS_SIMULATOR_URL); `twilio`:
     * Twilio Messages. Default: Twilio in the cloud, else the simulator when the local stack runs one,
     * else the outbox file.
     */
    SMS_PROVIDER: z.enum(['local', 'simulator', 'twilio']).optional(),
    /** Set by the local stack's SMS simulator service. */
    SMS_SIMULATOR_URL: z.string().optional(),
    /** The simulator's REST token and signing key (the telephony simulator's). */
    TELEPHONY_AUTH_TOKEN: z.string().optional(),
  }),
);

/**
 * The telephony secret (functions/providers/telephony/twilio-adapter.ts documents it); SMS reads its
 * `account_sid` and `auth_token`, and an optional `sms_from` (a Messaging Service SID or a number)
 * used when a message names no sender.
 */
const TelephonySecret = schemaOnFirstUse(() =>
  z.object({
    account_sid: z.string().min(1),
    auth_token: z.string().min(1),
    sms_from: z.string().optional(),
  }),
);

async function telephonyCredentials(): Promise<TwilioCredentials> {
  const parsed = TelephonySecret.parse(JSON.parse(await secretString('telephony')));
  return { accountSid: parsed.account_sid, authToken: parsed.auth_token, defaultFrom: parsed.sms_from };
}

let sender: SmsSender | undefined;

/** The configured adapter, built once per container. */
export function smsSender(): SmsSender {
  if (!sender) {
    const env = SmsConfig.parse(process.env);
    const provider =
      env.SMS_PROVIDER ?? (env.STAGE === 'cloud' ? 'twilio' : env.SMS_SIMULATOR_URL ? 'simulator' : 'local');
    sender =
      provider === 'twilio'
        ? new TwilioSmsSender(telephonyCredentials)
        : provider === 'simulator' && env.SMS_SIMULATOR_URL
          ? new SimulatorSmsSender({
              baseUrl: env.SMS_SIMULATOR_URL,
              authToken: env.TELEPHONY_AUTH_TOKEN ?? LOCAL_TELEPHONY_AUTH_TOKEN,
            })
          : new LocalOutboxSmsSender();
  }
  return sender;
}

/** Replace the adapter (tests of the port itself); `undefined` goes back to the configured one. */
export function setSmsSender(next: SmsSender | undefined): void {
  sender = next;
}

/** Sends one SMS through the port. Any provider failure is an SmsSendError. */
export async function sendSms(message: SmsMessage): Promise<SmsReceipt> {
  try {
    return await smsSender().send(message);
  } catch (error) {
    logger.warn('SMS not sent', {
      to: message.to,
      idempotencyKey: message.idempotencyKey,
      error: String(error),
    });
    if (error instanceof SmsSendError) throw error;
    throw new SmsSendError('SMS provider failed', { cause: error });
  }
}
