import { eventSubscribers } from '../../event-subscribers.js';
import { queueConsumer } from '../../platform/queue-consumer.js';
import { routeWorkspaceEvent } from '../events.js';

/**
 * Consumer of the `workspaceEvents` queue: each event is delivered to the workspace's webhook
 * endpoints subscribed to its type (one delivery per event and endpoint), then handed to the
 * subscribers of functions/event-subscribers.ts. A redelivered message does nothing twice.
 */
export const handler = queueConsumer('workspaceEvents', (message) =>
  routeWorkspaceEvent(message, eventSubscribers),
);
