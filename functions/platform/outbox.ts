import { clock } from './clock.js';
import { Entity } from './entity.js';
import { primaryIndex } from './keys.js';
import { logger } from './logger.js';
import { sendMessage } from './queue.js';
import type { MessageQueue, QueueMessage } from './queue-messages.js';
import { entityConfig } from './table.js';
import { toEventMessage, type NewWorkspaceEvent } from './workspace-events.js';

/**
 * The outbox of workspace events, and of any queue message a write causes: a write and the message it
 * causes are never split (a contact's deletion and the purge of its items: `outboxMessage`). The publisher
 * records the event as an outbox item in the SAME transaction as its write (add `outboxEvent:
 * OutboxEventEntity` to the domain's Service and `tx.outboxEvent.create(outboxRecord(event))` to the
 * transaction), then calls `publishRecorded` once the transaction succeeded: it sends the message to
 * its queue (`workspaceEvents` for an event) and deletes the item. A send that fails (the queue down, throttled,
 * refusing the body) is logged and left to the sweep (`sweepOutbox`, the `SweepOutboxEvents`
 * schedule), so the caller answers success once the write is durable, and nothing is lost.
 *
 *   outbox item    pk OUTBOX#<shard>    sk <event id>    an event recorded and not yet published
 *                                                          (`queue`: its queue; workspaceEvents when absent)
 *
 * Published twice? Not in the normal path: the request publishes and deletes within milliseconds,
 * and the sweep takes only items older than SWEEP_AFTER_SECONDS. After a crash between the send and
 * the delete the sweep sends it again; every receiver acts once per event id (workspace-events.ts), or
 * its work is idempotent.
 * The items are few and short-lived, so the sweep reads the OUTBOX_SHARDS partitions whole.
 */
export const OUTBOX_SHARDS = 4;

/** The sweep leaves an item this young alone: its own request is publishing it. */
export const SWEEP_AFTER_SECONDS = 30;

export const OutboxEventEntity = new Entity(
  {
    model: { entity: 'outboxEvent', version: '1', service: 'va' },
    attributes: {
      shard: { type: 'number', required: true },
      eventId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      recordedAt: { type: 'string', required: true },
      /** The queue message (JSON), exactly as it is sent: the event's facts at the time of the write. */
      message: { type: 'string', required: true },
      /** The queue it is sent to; absent: `workspaceEvents` (every item written before there were others). */
      queue: { type: 'string' },
    },
    indexes: {
      byShard: primaryIndex(['shard'], 'OUTBOX#${shard}', ['eventId'], '${eventId}'),
    },
  },
  entityConfig(),
);

export interface OutboxRecord {
  shard: number;
  eventId: string;
  workspaceId: string;
  recordedAt: string;
  message: string;
  queue?: string;
}

const shardOf = (eventId: string): number =>
  [...eventId].reduce((sum, c) => sum + c.charCodeAt(0), 0) % OUTBOX_SHARDS;

/** The outbox item of an event, to create in the transaction of the write that causes it. */
export function outboxRecord(event: NewWorkspaceEvent): OutboxRecord {
  return {
    shard: shardOf(event.id),
    eventId: event.id,
    workspaceId: event.workspaceId,
    recordedAt: clock.now().toISOString(),
    message: JSON.stringify(toEventMessage(event)),
  };
}

/**
 * The outbox item of a message other than an event, to create in the transaction of the write that
 * causes it. `id`: the message's own, unique to what caused it (a second write of it is refused).
 */
export function outboxMessage<Q extends MessageQueue>(
  queue: Q,
  id: string,
  workspaceId: string,
  message: QueueMessage<Q>,
): OutboxRecord {
  return {
    shard: shardOf(id),
    eventId: id,
    workspaceId,
    recordedAt: clock.now().toISOString(),
    message: JSON.stringify(message),
    queue,
  };
}

async function publishOne(record: OutboxRecord): Promise<void> {
  const queue = (record.queue ?? 'workspaceEvents') as MessageQueue;
  await sendMessage(queue, JSON.parse(record.message) as QueueMessage<typeof queue>);
  await removeRecord(record);
}

const removeRecord = (record: OutboxRecord) =>
  OutboxEventEntity.delete({ shard: record.shard, eventId: record.eventId }).go({ response: 'none' });

/**
 * Drops a recorded message its request found it no longer needs (the work was done in the request).
 * Never throws: an item left behind is published by the sweep, and its receiver finds nothing to do.
 */
export async function discardRecorded(record: OutboxRecord): Promise<void> {
  try {
    await removeRecord(record);
  } catch (error) {
    // Harmless: the sweep publishes it later and its receiver finds the work done.
    logger.warn('outbox item not discarded: the sweep will publish it', {
      eventId: record.eventId,
      error: String(error),
    });
  }
}

/**
 * Publishes events whose outbox items were just written, and deletes the items. Never throws: an
 * event not published stays in the outbox for the sweep. Returns whether all were published.
 */
export async function publishRecorded(records: OutboxRecord[]): Promise<boolean> {
  let published = true;
  for (const record of records) {
    try {
      await publishOne(record);
    } catch (error) {
      published = false;
      logger.warn('event not published: left in the outbox for the sweep', {
        eventId: record.eventId,
        error: String(error),
      });
    }
  }
  return published;
}

/** Publishes the event of this id if it is still in the outbox (a retried request that recorded it). */
export async function publishRecordedById(eventId: string): Promise<boolean> {
  const { data } = await OutboxEventEntity.get({ shard: shardOf(eventId), eventId }).go({ consistent: true });
  return data ? publishRecorded([data]) : true;
}

export interface OutboxSweepReport {
  examined: number;
  published: number;
  failed: number;
}

/** Scheduled: publishes the events whose request could not (recorded more than SWEEP_AFTER_SECONDS ago). */
export async function sweepOutbox(): Promise<OutboxSweepReport> {
  const cutoff = new Date(clock.now().getTime() - SWEEP_AFTER_SECONDS * 1000).toISOString();
  const report: OutboxSweepReport = { examined: 0, published: 0, failed: 0 };
  for (let shard = 0; shard < OUTBOX_SHARDS; shard += 1) {
    const { data: items } = await OutboxEventEntity.query
      .byShard({ shard })
      .where((attr, op) => op.lt(attr.recordedAt, cutoff))
      .go({ pages: 'all' });
    for (const item of items) {
      report.examined += 1;
      if (await publishRecorded([item])) report.published += 1;
      else report.failed += 1;
    }
  }
  if (report.examined > 0) logger.info('outbox sweep', { ...report });
  return report;
}
