/**
 * The SMS port: what the service needs from an SMS provider. Adapters: the local outbox
 * (`local-outbox.ts`, the default everywhere but the cloud) and Twilio Messages (`twilio.ts`), which
 * uses the telephony provider's credentials.
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
