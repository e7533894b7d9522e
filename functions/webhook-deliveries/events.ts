import { logger } from '../platform/logger.js';
import type { WorkspaceEventMessage } from '../platform/queue-messages.js';
import { fromEventMessage, type EventSubscriber } from '../platform/workspace-events.js';

/**
 * Routes one workspace event: its webhook deliveries first (one per subscribed endpoint, idempotent
 * on the event id), then every subscriber of its type. Every subscriber runs even when another
 * fails; any failure fails the message, which comes back and is routed again (all steps idempotent).
 */
export async function routeWorkspaceEvent(
  message: WorkspaceEventMessage,
  subscribers: readonly EventSubscriber[],
): Promise<{ event_id: string; subscribers: string[] }> {
  const event = fromEventMessage(message);
  const interested = subscribers.filter((s) => s.types.includes(event.type));
  const failures: { name: string; error: unknown }[] = [];
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
        failures.push({ name: subscriber.name, error });
      }
    }),
  );
  if (failures.length > 0) {
    throw new Error(
      `workspace event ${event.id}: subscriber(s) ${failures.map((f) => f.name).join(', ')} failed`,
    );
  }
  return { event_id: event.id, subscribers: interested.map((s) => s.name) };
}
