import { EmailSendError, type EmailMessage, type EmailReceipt, type EmailSender } from './port.js';
import { signRequest, type AwsCredentials } from './sigv4.js';

/**
 * Amazon SES v2 adapter over its HTTP API (`POST /v2/email/outbound-emails`), signed with SigV4 by
 * hand because no SES client package is installed. Credentials are the function's own (Lambda puts
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN in the environment).
 *
 * NOT WIRED in the cloud stack yet: lib/stack.ts grants no `ses:SendEmail` and sets no EMAIL_FROM
 * (a verified SES identity), so in the cloud a send fails and the caller records `email_sent: false`.
 * To wire it: verify a sender identity, grant `ses:SendEmail` on it to the functions that send email,
 * and set EMAIL_FROM (and EMAIL_PROVIDER=ses, the default when STAGE=cloud).
 *
 * SES has no idempotency key of its own: the key travels as a message tag for tracing, and callers
 * avoid double sends by naming each send (e.g. an invitation's send count) before they send.
 */
export class SesEmailSender implements EmailSender {
  constructor(
    private readonly options: {
      region: string;
      from: string;
      credentials: () => AwsCredentials;
      endpoint?: string;
      fetchImpl?: typeof fetch;
      now?: () => Date;
    },
  ) {}

  async send(message: EmailMessage): Promise<EmailReceipt> {
    const { region, from } = this.options;
    const url = new URL('/v2/email/outbound-emails', this.options.endpoint ?? `https://email.${region}.amazonaws.com`);
    const body = JSON.stringify({
      FromEmailAddress: from,
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
      EmailTags: [{ Name: 'idempotency_key', Value: message.idempotencyKey.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 256) }],
    });
    const headers = signRequest(
      { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
      { credentials: this.options.credentials(), region, service: 'ses', at: (this.options.now ?? (() => new Date()))() },
    );
    let response: Response;
    try {
      response = await (this.options.fetchImpl ?? fetch)(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
    } catch (error) {
      throw new EmailSendError('SES did not answer', { cause: error });
    }
    const text = await response.text();
    if (!response.ok) throw new EmailSendError(`SES refused the message: ${response.status} ${text.slice(0, 300)}`);
    const messageId = (JSON.parse(text) as { MessageId?: string }).MessageId ?? '';
    return { messageId, duplicate: false };
  }
}

/** Credentials from the environment (Lambda's execution role), read at each send (they rotate). */
export function environmentCredentials(env: NodeJS.ProcessEnv = process.env): AwsCredentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new EmailSendError('no AWS credentials in the environment');
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}
