import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { grantsMiddleware } from '../../platform/grants.js';
import { EmailSendError, type EmailMessage, type EmailReceipt, type EmailSender } from './port.js';

/**
 * Amazon SES v2 adapter (the official client; the function's own role signs). The stack grants
 * `ses:SendEmail` on the sender identity named by EMAIL_FROM to the functions that send email.
 *
 * SES has no idempotency key of its own: the key travels as a message tag for tracing, and callers
 * avoid double sends by naming each send (e.g. an invitation's send count) before they send.
 */
export class SesEmailSender implements EmailSender {
  private readonly client: SESv2Client;

  constructor(private readonly options: { region: string; from: string; client?: SESv2Client }) {
    if (options.client) {
      this.client = options.client;
    } else {
      this.client = new SESv2Client({ region: options.region });
      this.client.middlewareStack.add(grantsMiddleware('ses'), { step: 'initialize', name: 'enforceGrants' });
    }
  }

  async send(message: EmailMessage): Promise<EmailReceipt> {
    try {
      const result = await this.client.send(
        new SendEmailCommand({
          FromEmailAddress: this.options.from,
          Destination: { ToAddresses: [message.to] },
          Content: {
            Simple: {
              Subject: { Data: message.subject, Charset: 'UTF-8' },
              Body: {
                Text: { Data: message.text, Charset: 'UTF-8' },
                ...(message.html !== undefined ? { Html: { Data: message.html, Charset: 'UTF-8' } } : {}),
              },
            },
          },
          EmailTags: [
            {
              Name: 'idempotency_key',
              Value: message.idempotencyKey.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 256),
            },
          ],
        }),
        { abortSignal: AbortSignal.timeout(5000) },
      );
      return { messageId: result.MessageId ?? '', duplicate: false };
    } catch (error) {
      throw new EmailSendError('SES did not take the message', { cause: error });
    }
  }
}
