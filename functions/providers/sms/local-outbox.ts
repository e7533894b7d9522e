import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SmsSendError, type SmsMessage, type SmsReceipt, type SmsSender } from './port.js';

/**
 * Numbers the local adapter refuses, to simulate a provider failure: +61491570190 … +61491570199
 * (Australian numbers reserved for fiction, next to the telephony simulator's).
 */
export const FAILING_NUMBER_PREFIX = '+6149157019';

/** One line of `<state dir>/outbox/sms.jsonl`. */
export interface OutboxSms {
  message_id: string;
  to: string;
  from: string | null;
  text: string;
  idempotency_key: string;
  sent_at: string;
}

/** `<LOCAL_STATE_DIR or .local>/outbox/sms.jsonl`. */
export function smsOutboxPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolve(env.LOCAL_STATE_DIR || '.local'), 'outbox', 'sms.jsonl');
}

/** Every SMS in the outbox, oldest first (tests and the CLI read it back). */
export function readSmsOutbox(path = smsOutboxPath()): OutboxSms[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as OutboxSms);
}

/**
 * The local SMS provider: appends each message as one JSON line to the outbox file. A key already
 * in the outbox is not written again. Numbers starting with FAILING_NUMBER_PREFIX throw a permanent error.
 */
export class LocalOutboxSmsSender implements SmsSender {
  constructor(private readonly path: string = smsOutboxPath()) {}

  async send(message: SmsMessage): Promise<SmsReceipt> {
    if (message.to.startsWith(FAILING_NUMBER_PREFIX)) {
      // Like a provider refusing an unreachable number: permanent, retrying cannot help.
      throw new SmsSendError(
        `local SMS provider refused ${message.to} (numbers ${FAILING_NUMBER_PREFIX}x always fail)`,
        {
          permanent: true,
        },
      );
    }
    const earlier = readSmsOutbox(this.path).find((sms) => sms.idempotency_key === message.idempotencyKey);
    if (earlier) return { messageId: earlier.message_id, duplicate: true };
    const line: OutboxSms = {
      message_id: `local-sms-${randomUUID()}`,
      to: message.to,
      from: message.from ?? null,
      text: message.text,
      idempotency_key: message.idempotencyKey,
      sent_at: new Date().toISOString(),
    };
    mkdirSync(dirname(this.path), { recursive: true });
    // One write of one line with O_APPEND: concurrent senders never interleave within a line.
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
    return { messageId: line.message_id, duplicate: false };
  }
}
