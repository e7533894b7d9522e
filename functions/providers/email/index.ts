import * as z from 'zod';
import { logger } from '../../platform/logger.js';
import { LocalOutboxEmailSender } from './local-outbox.js';
import { EmailSendError, type EmailMessage, type EmailReceipt, type EmailSender } from './port.js';
import { SesEmailSender } from './ses.js';
import { schemaOnFirstUse } from '../../platform/first-use.js';

export { EmailSendError, type EmailMessage, type EmailReceipt, type EmailSender } from './port.js';

const EmailConfig = schemaOnFirstUse(() =>
  z.object({
    STAGE: z.enum(['local', 'cloud']).default('local'),
    /** `local`: the outbox file; `ses`: Amazon SES v2. Default: SES in the cloud, the outbox elsewhere. */
    EMAIL_PROVIDER: z.enum(['local', 'ses']).optional(),
    EMAIL_FROM: z.string().default('Voice Agent <no-reply@voice-agent.invalid>'),
    AWS_REGION: z.string().default('ap-southeast-2'),
  }),
);

let sender: EmailSender | undefined;

/** The configured adapter, built once per container. */
export function emailSender(): EmailSender {
  if (!sender) {
    const env = EmailConfig.parse(process.env);
    const provider = env.EMAIL_PROVIDER ?? (env.STAGE === 'cloud' ? 'ses' : 'local');
    sender =
      provider === 'ses'
        ? new SesEmailSender({ region: env.AWS_REGION, from: env.EMAIL_FROM })
        : new LocalOutboxEmailSender();
  }
  return sender;
}

/** Replace the adapter (tests of the port itself); `undefined` goes back to the configured one. */
export function setEmailSender(next: EmailSender | undefined): void {
  sender = next;
}

/**
 * Sends one email through the port. Any provider failure is an EmailSendError (callers decide
 * whether a failed email fails their operation; an invitation, for one, is kept).
 */
export async function sendEmail(message: EmailMessage): Promise<EmailReceipt> {
  try {
    return await emailSender().send(message);
  } catch (error) {
    logger.warn('email not sent', {
      to: message.to,
      idempotencyKey: message.idempotencyKey,
      error: String(error),
    });
    if (error instanceof EmailSendError) throw error;
    throw new EmailSendError('email provider failed', { cause: error });
  }
}
