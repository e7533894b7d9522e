import { createHash } from 'node:crypto';
import { logger } from '../platform/logger.js';
import type { WorkspaceEventMessage } from '../platform/queue-messages.js';
import { fromEventMessage, type EventSubscriber, type WorkspaceEvent } from '../platform/workspace-events.js';
import { startDelivery } from './deliveries.js';
import { listEventEndpoints } from './endpoints.js';
import type { EventEndpoint } from './entities.js';

/**
 * Routes one workspace event (functions/platform/workspace-events.ts): first one webhook delivery
 * per enabled endpoint of the workspace subscribed to its type, then every subscriber of its type.
 *
 * Exactly once per (event id, endpoint): the delivery id is derived from the two
 * (`eventDeliveryId`), and `startDelivery` creates a delivery once and queues its first attempt only
 * while none was made, whose conditional claim lets one request out however often it is queued. So
 * a redelivered message, or a republished event, makes no second request. Every subscriber runs even
 * when another fails; any failure fails the message, which comes back and is routed again (every
 * step idempotent on the event id).
 */
export async function routeWorkspaceEvent(
  message: WorkspaceEventMessage,
  subscribers: readonly EventSubscriber[],
  /** The workspace's endpoints (a unit test passes its own). */
  deps: { listEndpoints: (workspaceId: string) => Promise<EventEndpoint[]> } = {
    listEndpoints: listEventEndpoints,
  },
): Promise<{ event_id: string; deliveries: string[]; subscribers: string[] }> {
  const event = fromEventMessage(message);
  const deliveries = await deliverToEndpoints(event, await deps.listEndpoints(event.workspaceId));
  const interested = subscribers.filter((s) => s.types.includes(event.type));
  const failures: string[] = [];
  await Promise.all(
    interested.map(async (subscriber) => {
      try {
        await subscriber.handle(event);
      } catch (error) {
        logger.warn('workspace event subscriber failed', {
          subscriber: subscriber.name,
          eventId: event.id,
          eventType: event.type,
          error: String(error),
        });
        failures.push(subscriber.name);
      }
    }),
  );
  if (failures.length > 0) {
    throw new Error(`workspace event ${event.id}: subscriber(s) ${failures.join(', ')} failed`);
  }
  return { event_id: event.id, deliveries, subscribers: interested.map((s) => s.name) };
}

/** The payload every endpoint receives: Standard Webhooks' `{type, timestamp, data}`. */
export function eventPayload(event: WorkspaceEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event.data });
}

async function deliverToEndpoints(event: WorkspaceEvent, all: EventEndpoint[]): Promise<string[]> {
  const endpoints = all.filter((endpoint) => endpoint.enabled && endpoint.eventTypes.includes(event.type));
  if (endpoints.length === 0) return [];
  const payload = eventPayload(event);
  const callId = typeof event.data.call_id === 'string' ? event.data.call_id : undefined;
  const agentId = typeof event.data.agent_id === 'string' ? event.data.agent_id : undefined;
  const started = await Promise.all(
    endpoints.map((endpoint) =>
      startDelivery({
        workspaceId: event.workspaceId,
        organisationId: event.organisationId,
        deliveryId: eventDeliveryId(event, endpoint.endpointId),
        // The event id is the `webhook-id`: the same for every endpoint, attempt and resend, so a
        // receiver deduplicates on it.
        webhookId: event.id,
        eventType: event.type,
        callId,
        agentId,
        endpointId: endpoint.endpointId,
        eventId: event.id,
        url: endpoint.url,
        payload,
        kind: 'event',
      }),
    ),
  );
  return started.map((delivery) => delivery.deliveryId);
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The delivery of an event to an endpoint: a delivery id (`dlv_` and a ULID) that is always the same
 * for the pair — its time part the event's time (so the log stays newest first), its random part
 * from a hash of the event id and the endpoint id.
 */
export function eventDeliveryId(
  event: Pick<WorkspaceEvent, 'id' | 'occurredAt'>,
  endpointId: string,
): string {
  let ms = Math.max(0, Date.parse(event.occurredAt) || 0);
  let time = '';
  for (let i = 0; i < 10; i += 1) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  const hash = createHash('sha256').update(`${event.id}\n${endpointId}`).digest();
  let random = '';
  for (let i = 0; i < 16; i += 1) random += CROCKFORD[(hash[i] ?? 0) % 32];
  return `dlv_${time}${random}`;
}
