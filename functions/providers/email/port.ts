/**
 * The email port: what the service needs from an email provider. Adapters: the local outbox
 * (`local-outbox.ts`, the default everywhere but the cloud) and Amazon SES v2 (`ses.ts`).
 */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /**
   * Names this message: sending the same key twice delivers once (a retried request or a redelivered
   * event never emails twice).
   */
  idempotencyKey: string;
}

export interface EmailReceipt {
  messageId: string;
  /** True when this key had already been sent: nothing was sent now. */
  duplicate: boolean;
}

export interface EmailSender {
  send(message: EmailMessage): Promise<EmailReceipt>;
}

/** Thrown by an adapter when the provider refused or failed to take the message. */
export class EmailSendError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmailSendError';
  }
}
