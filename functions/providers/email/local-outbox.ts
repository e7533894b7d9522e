import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { assertGranted } from '../../platform/grants.js';
import { EmailSendError, type EmailMessage, type EmailReceipt, type EmailSender } from './port.js';

/** Addresses at this domain make the local adapter fail, to simulate a provider failure. */
export const FAILING_DOMAIN = 'fail.test';

/** One line of `<state dir>/outbox/email.jsonl`. */
export interface OutboxEmail {
  message_id: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  idempotency_key: string;
  sent_at: string;
}

/** `<LOCAL_STATE_DIR or .local>/outbox/email.jsonl` (the local stack puts LOCAL_STATE_DIR in the env). */
export function emailOutboxPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolve(env.LOCAL_STATE_DIR || '.local'), 'outbox', 'email.jsonl');
}

/** Every email in the outbox, oldest first (tests and the CLI read it back). */
export function readEmailOutbox(path = emailOutboxPath()): OutboxEmail[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as OutboxEmail);
}

/**
 * The local email provider: appends each message as one JSON line to the outbox file. A key already
 * in the outbox is not written again. Addresses at `fail.test` throw, as a provider outage would.
 */
export class LocalOutboxEmailSender implements EmailSender {
  constructor(private readonly path: string = emailOutboxPath()) {}

  async send(message: EmailMessage): Promise<EmailReceipt> {
    // SES's stand-in: refused, as SES would be, to a function not granted email (access.email).
    assertGranted('ses', 'SendEmail');
    const domain = message.to.split('@').pop()?.toLowerCase();
    if (domain === FAILING_DOMAIN) {
      throw new EmailSendError(
        `local email provider refused ${message.to} (addresses at ${FAILING_DOMAIN} always fail)`,
      );
    }
    const earlier = readEmailOutbox(this.path).find(
      (email) => email.idempotency_key === message.idempotencyKey,
    );
    if (earlier) return { messageId: earlier.message_id, duplicate: true };
    const line: OutboxEmail = {
      message_id: `local-${randomUUID()}`,
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html !== undefined ? { html: message.html } : {}),
      idempotency_key: message.idempotencyKey,
      sent_at: new Date().toISOString(),
    };
    mkdirSync(dirname(this.path), { recursive: true });
    // One write of one line with O_APPEND: concurrent senders never interleave within a line.
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
    return { messageId: line.message_id, duplicate: false };
  }
}
