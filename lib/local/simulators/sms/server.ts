import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import {
  FAILING_NUMBER_PREFIX,
  readSmsOutbox,
  type OutboxSms,
} from '../../../../functions/providers/sms/local-outbox.js';
import {
  postSignedForm,
  readJsonObject,
  requireString,
  routeTable,
  sendJson,
  simulatorServer,
  SimulatorError,
} from '../http-kit.js';

/**
 * The SMS simulator: a small HTTP service standing in for Twilio Messages. It takes our outbound
 * messages (the `simulator` adapter, functions/providers/sms/simulator.ts), writes each one to a
 * readable outbox — the JSON-lines file the local outbox adapter writes too (`<state dir>/outbox/
 * sms.jsonl`), and `GET /messages` — and reports each one's delivery as Twilio does: signed,
 * form-encoded status callbacks (`sent`, then `delivered`) to the message's status callback URL,
 * STATUS_CALLBACK_DELAY_MS after its REST answer (Twilio's come once the carrier has the message,
 * seconds later: a callback never beats the service's record of the send it reports on). And
 * it plays a phone sending us an SMS: `POST /inbound` makes it deliver a signed inbound message to
 * `POST /webhooks/telephony/sms`, exactly as Twilio would (`npm run cli -- sms receive`).
 *
 * The recipient's number decides the fate of an outbound message (Australian numbers reserved for
 * fiction, next to the telephony simulator's):
 *   +6149157019x   refused at once (a 400, like an unreachable number): the send fails
 *   +61491570188   accepted; every status callback is sent twice, `delivered` before `sent`
 *   +61491570189   accepted, then `undelivered` (ErrorCode 30003, unreachable handset)
 *   any other      accepted, `sent`, then `delivered`
 *
 * REST (JSON, `Authorization: Bearer <auth token>`):
 *   POST /messages  {to, from, text, idempotency_key, status_callback?} → 201 {sid, duplicate}
 *                   (a key sent before is not sent again: its sid, duplicate true)
 *   GET  /messages?to=&from=  → {items: outbox lines, newest last}
 *   POST /inbound   {from, to, body, sid?} → 201 {sid, http_status, response}: the signed inbound
 *                   message was delivered (`sid` repeats an earlier one: a provider's replay)
 */

export const SMS_SCENARIO_NUMBERS = {
  duplicated: '+61491570188',
  undelivered: '+61491570189',
  refused: `${FAILING_NUMBER_PREFIX}0`,
} as const;

export interface SmsSimulatorOptions {
  /** Where inbound messages go (`<gatewayUrl>/webhooks/telephony/sms`). */
  gatewayUrl: string;
  /** Callbacks are signed with it; REST requests must carry it. */
  authToken: string;
  /** The outbox file (JSON lines). */
  outboxPath: string;
  /** Status callbacks sent at once at most (the rest wait their turn). Default 8. */
  maxCallbacksInFlight?: number;
  port?: number;
}

export interface SmsActivity {
  idle: boolean;
  callbacks_pending: number;
  callbacks_in_flight: number;
  messages_sent: number;
}

export interface SmsSimulator {
  url: string;
  port: number;
  activity(): SmsActivity;
  stop(): Promise<void>;
}

const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
const sid = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

interface Callback {
  url: string;
  params: Record<string, string>;
}

/** How long after its REST answer a message's status callbacks start (Twilio's: seconds). */
export const STATUS_CALLBACK_DELAY_MS = 100;

export async function startSmsSimulator(options: SmsSimulatorOptions): Promise<SmsSimulator> {
  const maxInFlight = options.maxCallbacksInFlight ?? 8;
  /** idempotency key → sid: seeded from the outbox, so a restarted stack still sends a key once. */
  const sent = new Map<string, string>(
    readSmsOutbox(options.outboxPath).map((line) => [line.idempotency_key, line.message_id]),
  );
  const waiting: Callback[] = [];
  /** Messages whose callbacks are still to be queued (their delay runs). */
  let scheduled = 0;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let inFlight = 0;
  let messagesSent = 0;
  let stopped = false;

  const postSigned = (url: string, params: Record<string, string>) =>
    postSignedForm(url, params, {
      authToken: options.authToken,
      userAgent: 'TwilioProxy/1.1 (sms simulator)',
      stopped: () => stopped,
    });

  function pump(): void {
    while (!stopped && inFlight < maxInFlight && waiting.length > 0) {
      const next = waiting.shift()!;
      inFlight += 1;
      postSigned(next.url, next.params)
        .catch((error: unknown) => {
          process.stderr.write(`[sms-simulator] status callback failed: ${String(error)}\n`);
        })
        .finally(() => {
          inFlight -= 1;
          pump();
        });
    }
  }

  function statusCallbacks(line: OutboxSms, callbackUrl: string): void {
    const base = {
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      MessageSid: line.message_id,
      SmsSid: line.message_id,
      From: line.from ?? '',
      To: line.to,
    };
    const status = (value: string, extra: Record<string, string> = {}): Callback => ({
      url: callbackUrl,
      params: { ...base, MessageStatus: value, SmsStatus: value, ...extra },
    });
    const callbacks =
      line.to === SMS_SCENARIO_NUMBERS.duplicated
        ? [status('delivered'), status('sent'), status('delivered'), status('sent')]
        : line.to === SMS_SCENARIO_NUMBERS.undelivered
          ? [status('sent'), status('undelivered', { ErrorCode: '30003' })]
          : [status('sent'), status('delivered')];
    scheduled += 1;
    const timer = setTimeout(() => {
      timers.delete(timer);
      scheduled -= 1;
      waiting.push(...callbacks);
      pump();
    }, STATUS_CALLBACK_DELAY_MS);
    timers.add(timer);
  }

  async function outbound(body: Record<string, unknown>) {
    const to = requireString(body.to, 'to');
    const key = requireString(body.idempotency_key, 'idempotency_key');
    const text = requireString(body.text, 'text');
    if (to.startsWith(FAILING_NUMBER_PREFIX))
      throw new SimulatorError(
        400,
        `the number ${to} is unreachable (numbers ${FAILING_NUMBER_PREFIX}x always fail)`,
      );
    const earlier = sent.get(key);
    if (earlier) return { sid: earlier, duplicate: true };
    const line: OutboxSms = {
      message_id: sid('SM'),
      to,
      from: typeof body.from === 'string' ? body.from : null,
      text,
      idempotency_key: key,
      sent_at: new Date().toISOString(),
    };
    sent.set(key, line.message_id);
    mkdirSync(dirname(options.outboxPath), { recursive: true });
    appendFileSync(options.outboxPath, `${JSON.stringify(line)}\n`);
    messagesSent += 1;
    if (typeof body.status_callback === 'string' && body.status_callback !== '')
      statusCallbacks(line, body.status_callback);
    return { sid: line.message_id, duplicate: false };
  }

  async function inbound(body: Record<string, unknown>) {
    const from = requireString(body.from, 'from');
    const to = requireString(body.to, 'to');
    const text = typeof body.body === 'string' ? body.body : '';
    const messageSid = typeof body.sid === 'string' && body.sid !== '' ? body.sid : sid('SM');
    const url = `${options.gatewayUrl.replace(/\/$/, '')}/webhooks/telephony/sms`;
    const result = await postSigned(url, {
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      MessageSid: messageSid,
      SmsSid: messageSid,
      SmsMessageSid: messageSid,
      From: from,
      To: to,
      Body: text,
      NumMedia: '0',
      NumSegments: '1',
    });
    return { sid: messageSid, http_status: result.status, response: result.text.slice(0, 2000) };
  }

  const routes = routeTable([
    {
      method: 'POST',
      path: '/messages',
      handle: async ({ req, res }) => sendJson(res, 201, await outbound(await readJsonObject(req))),
    },
    {
      method: 'GET',
      path: '/messages',
      handle: ({ res, url }) => {
        const to = url.searchParams.get('to');
        const from = url.searchParams.get('from');
        const items = readSmsOutbox(options.outboxPath).filter(
          (line) => (to === null || line.to === to) && (from === null || line.from === from),
        );
        sendJson(res, 200, { items });
      },
    },
    {
      method: 'POST',
      path: '/inbound',
      handle: async ({ req, res }) => sendJson(res, 201, await inbound(await readJsonObject(req))),
    },
  ]);

  const server = simulatorServer(async (req, res, url) => {
    if (req.headers.authorization !== `Bearer ${options.authToken}`)
      return sendJson(res, 401, { error: 'bad credentials' });
    if (await routes(req, res, url)) return;
    sendJson(res, 404, { error: 'not found' });
  });
  await new Promise<void>((resolveListening, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolveListening();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    activity: () => ({
      idle: waiting.length === 0 && scheduled === 0 && inFlight === 0,
      callbacks_pending: waiting.length + scheduled,
      callbacks_in_flight: inFlight,
      messages_sent: messagesSent,
    }),
    stop: () =>
      new Promise<void>((resolveClosed) => {
        stopped = true;
        waiting.length = 0;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        scheduled = 0;
        server.close(() => resolveClosed());
        server.closeAllConnections();
      }),
  };
}
