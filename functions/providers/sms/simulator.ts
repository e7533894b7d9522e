import { SmsSendError, type SmsMessage, type SmsReceipt, type SmsSender } from './port.js';

/** Where the local SMS simulator listens and the token its REST API wants (the telephony one). */
export interface SmsSimulatorOptions {
  baseUrl: string;
  authToken: string;
  /** A send that takes longer is treated as failed (maybe sent), like the Twilio adapter's. */
  timeoutMs?: number;
}

/**
 * The local SMS simulator's adapter (lib/local/simulators/sms/server.ts), spoken to as the Twilio
 * adapter speaks to Twilio Messages: `POST /messages {to, from, text, idempotency_key,
 * status_callback}` → `{sid, duplicate}`. The simulator keeps a readable outbox and sends the signed
 * status callbacks (`sent`, then `delivered`) a real provider would. A 4xx is a permanent refusal
 * (an unreachable number), anything else may be retried.
 */
export class SimulatorSmsSender implements SmsSender {
  constructor(private readonly options: SmsSimulatorOptions) {}

  async send(message: SmsMessage): Promise<SmsReceipt> {
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl.replace(/\/$/, '')}/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.authToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          to: message.to,
          from: message.from ?? null,
          text: message.text,
          idempotency_key: message.idempotencyKey,
          status_callback: message.statusCallbackUrl ?? null,
        }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new SmsSendError(`SMS simulator unreachable: ${(error as Error).message}`, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) {
      const permanent = response.status >= 400 && response.status < 500 && response.status !== 429;
      throw new SmsSendError(`SMS simulator refused the message: ${response.status} ${text.slice(0, 300)}`, {
        permanent,
      });
    }
    const body = JSON.parse(text) as { sid: string; duplicate?: boolean };
    return { messageId: body.sid, duplicate: body.duplicate === true };
  }
}
