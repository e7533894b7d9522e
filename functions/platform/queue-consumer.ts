import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger, runWithLogKeys } from './logger.js';
import { messageSchema, type MessageQueue, type QueueMessage } from './queue-messages.js';

/**
 * What a handler returns when its message changed nothing (a heartbeat: the campaigns' ticker sends
 * a dial pass every second while nothing is due). Its line is logged at DEBUG, not INFO: the log shows
 * changes, not heartbeats.
 */
export class NothingChanged {
  constructor(readonly outcome: string) {}
  toJSON(): string {
    return this.outcome;
  }
  toString(): string {
    return this.outcome;
  }
}

/** A message that is not its queue's shape (or not JSON): no receive will ever handle it. */
export class MalformedMessage extends Error {
  override readonly name = 'MalformedMessage';
}

/**
 * The Lambda handler of a queue's consumer: each record of the batch is parsed with the queue's one
 * message schema (functions/platform/queue-messages.ts) and handed to `handleMessage`, in parallel.
 * Failures are per record (a partial batch response): a failing message is received again after the
 * visibility timeout and, after the queue's maxReceiveCount receives, the redrive policy moves it to
 * the DLQ. A batch in which every record failed is reported the same way, not thrown.
 *
 * Redelivery is normal (SQS is at-least-once): `handleMessage` must be idempotent, and the services
 * are (they claim the call, action run or delivery before any effect).
 *
 * A malformed message is logged as an error and reported failed like any other. It fails on every
 * receive, so it ends in the DLQ after maxReceiveCount receives, where it can be inspected and
 * redriven once a consumer that understands it is deployed; it never holds up the rest of its batch,
 * and it is never dropped silently.
 */
export function queueConsumer<Q extends MessageQueue>(
  queue: Q,
  handleMessage: (message: QueueMessage<Q>) => Promise<unknown>,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const schema = messageSchema(queue);

  // Each record's lines carry its queue and message id (not those of whatever else this process ran).
  const recordHandler = (record: SQSRecord): Promise<void> =>
    runWithLogKeys({ queue, messageId: record.messageId }, () => handleRecord(record));

  async function handleRecord(record: SQSRecord): Promise<void> {
    const about = {
      queue,
      messageId: record.messageId,
      receiveCount: record.attributes.ApproximateReceiveCount,
    };
    const parsed = schema.safeParse(parseJson(record.body));
    if (!parsed.success) {
      logger.error('malformed queue message: failed until the redrive policy moves it to the DLQ', {
        ...about,
        body: record.body.slice(0, 2000),
        issues: parsed.error.issues.map(
          (i) => `${i.path.map(String).join('.') || '(message)'}: ${i.message}`,
        ),
      });
      throw new MalformedMessage(`malformed ${queue} message ${record.messageId}`);
    }
    const message = parsed.data as QueueMessage<Q>;
    let outcome: unknown;
    // `message` is the log line's own key for Powertools (a key of that name is dropped, with a
    // warning of its own on every line): the queue's message goes under `queueMessage`.
    try {
      outcome = await handleMessage(message);
    } catch (error) {
      logger.warn('queue message failed', { ...about, queueMessage: message, error: String(error) });
      throw error;
    }
    const line = { ...about, ...idsOf(message), outcome: outcomeWithoutRepeats(outcome, message) };
    if (outcome instanceof NothingChanged) logger.debug('queue message handled: nothing changed', line);
    else logger.info('queue message handled', line);
  }

  // A processor per invocation: its state is the batch's (locally, batches may run concurrently).
  return (event, context) =>
    processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
      context,
      throwOnFullBatchFailure: false,
    });
}

/**
 * What names a message: its ids, type and kind, and those of the objects it holds (`event.id`,
 * `event.type`). An INFO line needs no more; a failure logs the message whole (redacted).
 */
function idsOf(message: unknown, prefix = ''): Record<string, unknown> {
  const ids: Record<string, unknown> = {};
  if (!message || typeof message !== 'object' || Array.isArray(message)) return ids;
  for (const [key, value] of Object.entries(message)) {
    if (NAMING_KEY.test(key) && (typeof value === 'string' || typeof value === 'number'))
      ids[`${prefix}${key}`] = value;
    else if (prefix === '' && value && typeof value === 'object') Object.assign(ids, idsOf(value, `${key}.`));
  }
  return ids;
}
const NAMING_KEY = /(^|_)id$|Id$|^type$|^kind$/;

/**
 * The outcome without what the line names already: a handler that answers the event it handled
 * (`{event_id, deliveries}`) would repeat `event.id` as `event_id`.
 */
export function outcomeWithoutRepeats(outcome: unknown, message: unknown): unknown {
  if (outcome instanceof NothingChanged) return outcome.outcome;
  if (!outcome || typeof outcome !== 'object' || Array.isArray(outcome)) return outcome;
  const named = new Set(Object.values(idsOf(message)));
  return Object.fromEntries(
    Object.entries(outcome).filter(([key, value]) => !(NAMING_KEY.test(key) && named.has(value as string))),
  );
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
