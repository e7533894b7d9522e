import { awsFetch, serviceEndpoint } from '../../platform/aws-http.js';
import { assertGranted } from '../../platform/grants.js';
import { EmailSendError, type EmailMessage, type EmailReceipt, type EmailSender } from './port.js';

/**
 * Amazon SES v2 adapter: `SendEmail` (`POST /v2/email/outbound-emails`) as a signed request
 * (platform/aws-http.ts; the SES client would add ~60 KB to every function that can send email), the
 * function's own role signing. The stack grants `ses:SendEmail` on the sender identity named by
 * EMAIL_FROM to the functions that send email.
 *
 * SES has no idempotency key of its own: the key travels as a message tag for tracing, and callers
 * avoid double sends by naming each send (e.g. an invitation's send count) before they send.
 */
export class SesEmailSender implements EmailSender {
  constructor(
    private readonly options: {
      region: string;
      from: string;
      /** Another endpoint than SES's own (tests); AWS_ENDPOINT_URL_SESV2 also sets it. */
      endpoint?: string;
      /** Fixed credentials (tests); the function's role otherwise. */
      credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
    },
  ) {}

  async send(message: EmailMessage): Promise<EmailReceipt> {
    const input = {
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
    };
    try {
      assertGranted('ses', 'SendEmail', input);
      const base = this.options.endpoint
        ? new URL(this.options.endpoint)
        : serviceEndpoint('SESV2', `email.${this.options.region}.amazonaws.com`);
      const response = await awsFetch(
        {
          service: 'ses',
          region: this.options.region,
          method: 'POST',
          url: new URL('/v2/email/outbound-emails', base),
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(input),
          credentials: this.options.credentials,
        },
        { signal: AbortSignal.timeout(5000) },
      );
      const result = (await response.json()) as { MessageId?: string };
      return { messageId: result.MessageId ?? '', duplicate: false };
    } catch (error) {
      throw new EmailSendError('SES did not take the message', { cause: error });
    }
  }
}
