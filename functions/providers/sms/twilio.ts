import { SmsSendError, type SmsMessage, type SmsReceipt, type SmsSender } from './port.js';

/** The telephony provider's credentials (the `telephony` secret), which Twilio Messages also uses. */
export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** Sender when a message names none: a Messaging Service SID (`MG…`) or an E.164 number. */
  defaultFrom?: string;
}

type TwilioClient = ReturnType<typeof import('twilio')>;

/**
 * Twilio Messages adapter. Twilio has no idempotency key for sends: the key is kept in the status
 * callback's query for tracing, and callers avoid double sends by recording each send before they
 * could retry it.
 */
export class TwilioSmsSender implements SmsSender {
  private client: Promise<{ client: TwilioClient; defaultFrom?: string }> | undefined;

  constructor(private readonly credentials: () => Promise<TwilioCredentials>) {}

  private connect() {
    this.client ??= (async () => {
      const c = await this.credentials();
      const { default: twilio } = await import('twilio');
      return { client: twilio(c.accountSid, c.authToken, { timeout: 10_000 }), defaultFrom: c.defaultFrom };
    })();
    this.client.catch(() => {
      this.client = undefined;
    });
    return this.client;
  }

  async send(message: SmsMessage): Promise<SmsReceipt> {
    const { client, defaultFrom } = await this.connect();
    const from = message.from ?? defaultFrom;
    if (!from)
      throw new SmsSendError('no sender: the message names none and the telephony secret has no sms_from', {
        permanent: true,
      });
    try {
      const sent = await client.messages.create({
        to: message.to,
        body: message.text,
        ...(from.startsWith('MG') ? { messagingServiceSid: from } : { from }),
      });
      return { messageId: sent.sid, duplicate: false };
    } catch (error) {
      const status = (error as { status?: number }).status;
      const permanent = status !== undefined && status >= 400 && status < 500 && status !== 429;
      throw new SmsSendError(`Twilio refused the message: ${(error as Error).message}`, {
        cause: error,
        permanent,
      });
    }
  }
}
