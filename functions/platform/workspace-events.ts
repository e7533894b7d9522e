import { clock } from './clock.js';
import { sendMessage, sendMessages } from './queue.js';
import { WORKSPACE_EVENT_TYPES, type WorkspaceEventMessage } from './queue-messages.js';

/**
 * Workspace events: something happened in a workspace that customers' webhook endpoints and other
 * domains (campaigns, workflows, …) may react to. A publisher calls `publishWorkspaceEvent` once the
 * fact is recorded; the event travels on the `workspaceEvents` queue to one consumer,
 * `RouteWorkspaceEvents` (functions/webhook-deliveries/handlers/route-workspace-events.ts), which
 * delivers it to the workspace's webhook endpoints subscribed to its type and then hands it to every
 * subscriber of functions/event-subscribers.ts.
 *
 * The event id is chosen by the publisher and is deterministic (`evt_call_ended_<callId>`,
 * `evt_contact_created_<contactId>`, …): a republish after a crash, or a redelivered message, carries
 * the same id, and every receiver (webhook deliveries, subscribers) does its work once per id.
 *
 * Unlike the other queues' messages, an event carries its data (the facts at the time it happened),
 * so receivers need not read them back; keep `data` small (well under SQS's 256 KB).
 */

/** Declared beside the queue's message schema (queue-messages.ts), which validates them. */
export { WORKSPACE_EVENT_TYPES };

export type WorkspaceEventType = (typeof WORKSPACE_EVENT_TYPES)[number];

export const isWorkspaceEventType = (value: string): value is WorkspaceEventType =>
  (WORKSPACE_EVENT_TYPES as readonly string[]).includes(value);

/** An event as a publisher hands it over (`occurredAt` defaults to now). */
export interface NewWorkspaceEvent {
  /** Deterministic, chosen by the publisher: `evt_<what>_<ids>` (≤ 200 characters). */
  id: string;
  type: WorkspaceEventType;
  workspaceId: string;
  organisationId: string;
  /** ISO 8601; defaults to now. */
  occurredAt?: string;
  /** Snake_case JSON facts of the event: what webhook endpoints receive as the payload's `data`. */
  data: Record<string, unknown>;
}

/** An event as receivers (the consumer, subscribers) see it. */
export interface WorkspaceEvent extends NewWorkspaceEvent {
  occurredAt: string;
}

export function toEventMessage(event: NewWorkspaceEvent): WorkspaceEventMessage {
  return {
    type: 'workspace.event',
    event: {
      id: event.id,
      type: event.type,
      workspace_id: event.workspaceId,
      organisation_id: event.organisationId,
      occurred_at: event.occurredAt ?? clock.now().toISOString(),
      data: event.data,
    },
  };
}

export function fromEventMessage(message: WorkspaceEventMessage): WorkspaceEvent {
  const { event } = message;
  return {
    id: event.id,
    type: event.type,
    workspaceId: event.workspace_id,
    organisationId: event.organisation_id,
    occurredAt: event.occurred_at,
    data: event.data,
  };
}

/**
 * Sends one event to the `workspaceEvents` queue (the caller's function must declare
 * `sendsTo: ['workspaceEvents']`). Safe to repeat with the same id: receivers act once per id.
 */
export async function publishWorkspaceEvent(event: NewWorkspaceEvent): Promise<void> {
  await sendMessage('workspaceEvents', toEventMessage(event));
}

/** Many events at once, ten per SendMessageBatch request (bulk producers such as imports). */
export async function publishWorkspaceEvents(events: NewWorkspaceEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sendMessages('workspaceEvents', events.map(toEventMessage));
}

/**
 * A domain that reacts to workspace events. The `RouteWorkspaceEvents` consumer hands it every event
 * of one of its `types`, after the event's webhook deliveries are queued. `handle` must be
 * idempotent on `event.id`: the queue message may be delivered again (and a failing subscriber makes
 * the whole message come back, so the others see the event again too). Listed in
 * functions/event-subscribers.ts; a subscriber that needs a resource (a queue, a secret) declares it
 * in the `RouteWorkspaceEvents` entry of lib/catalog.ts.
 */
export interface EventSubscriber {
  /** Unique, for logs: e.g. `campaigns`, `workflows`. */
  name: string;
  types: WorkspaceEventType[];
  handle(event: WorkspaceEvent): Promise<void>;
}
