import { twilioRequest, type TwilioAccount } from '../telephony/twilio-rest.js';
import { SmsSendError, type SmsMessage, type SmsReceipt, type SmsSender } from './port.js';

/** The telephony provider's credentials (the `telephony` secret), which Twilio Messages also uses. */
export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** Sender when a message names none: a Messaging Service SID (`MG…`) or an E.164 number. */
  defaultFrom?: string;
}

/** Twilio Messages answers fast; a send that takes longer than this is treated as failed (maybe sent). */
const SEND_TIMEOUT_MS = 10_000;

/**
 * Twilio Messages adapter. Twilio has no idempotency key for sends: the key is kept in the status
 * callback's query for tracing, and callers avoid double sends by recording each send before they
 * could retry it.
 */
export class TwilioSmsSender implements SmsSender {
  private connection: Promise<{ account: TwilioAccount; defaultFrom?: string }> | undefined;

  constructor(private readonly credentials: () => Promise<TwilioCredentials>) {}

  private connect() {
    this.connection ??= this.credentials().then((c) => ({
      account: { accountSid: c.accountSid, authToken: c.authToken },
      defaultFrom: c.defaultFrom,
    }));
    this.connection.catch(() => {
      this.connection = undefined;
    });
    return this.connection;
  }

  async send(message: SmsMessage): Promise<SmsReceipt> {
    const { account, defaultFrom } = await this.connect();
    const from = message.from ?? defaultFrom;
    if (!from)
      throw new SmsSendError('no sender: the message names none and the telephony secret has no sms_from', {
        permanent: true,
      });
    try {
      const sent = await twilioRequest<{ sid: string }>(
        account,
        'POST',
        '/Messages.json',
        {
          To: message.to,
          Body: message.text,
          ...(from.startsWith('MG') ? { MessagingServiceSid: from } : { From: from }),
          ...(message.statusCallbackUrl ? { StatusCallback: message.statusCallbackUrl } : {}),
        },
        { timeoutMs: SEND_TIMEOUT_MS },
      );
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
