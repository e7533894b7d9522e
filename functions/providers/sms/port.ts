/**
 * The SMS port: what the service needs from an SMS provider. Adapters: the local outbox
 * (`local-outbox.ts`), the local SMS simulator (`simulator.ts`, an HTTP service the local stack runs,
 * with a readable outbox and signed delivery callbacks; the local default when it runs) and Twilio
 * Messages (`twilio.ts`, the cloud default), which uses the telephony provider's credentials. Inbound
 * messages and status callbacks arrive in Twilio's dialect at `POST /webhooks/telephony/sms`, signed
 * like the voice callbacks (the telephony port's `verifySignature`).
 */
export interface SmsMessage {
  /** E.164. */
  to: string;
  /** E.164 sender (the agent's number); the adapter's default sender when absent. */
  from?: string;
  text: string;
  /**
   * Names this message: sending the same key twice sends once where the provider allows it (the
   * local outbox does; Twilio has no such key, so callers record each send before retrying).
   */
  idempotencyKey: string;
  /**
   * Where the provider reports the message's delivery status (Twilio's `StatusCallback`: signed,
   * form-encoded `MessageSid`, `MessageStatus`, `ErrorCode`). None: no status reports.
   */
  statusCallbackUrl?: string;
}

export interface SmsReceipt {
  messageId: string;
  /** True when this key had already been sent: nothing was sent now. */
  duplicate: boolean;
}

export interface SmsSender {
  send(message: SmsMessage): Promise<SmsReceipt>;
}

/** Thrown by an adapter when the provider refused or failed to take the message. */
export class SmsSendError extends Error {
  /** True when sending again cannot succeed (an invalid number, an opted-out recipient). */
  readonly permanent: boolean;
  constructor(message: string, options?: { cause?: unknown; permanent?: boolean }) {
    super(message, options);
    this.name = 'SmsSendError';
    this.permanent = options?.permanent ?? false;
  }
}
