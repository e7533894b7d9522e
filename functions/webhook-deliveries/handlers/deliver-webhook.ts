import { queueConsumer } from '../../platform/queue-consumer.js';
import { processAttemptMessage } from '../attempts.js';

/**
 * Consumer of the `webhookDelivery` queue: one scheduled attempt of one delivery per message,
 * processed in parallel (each attempt is bounded by 15 s). The message of an attempt that left
 * the delivery dead is reported failed on every receive, so the redrive policy moves it to the DLQ.
 */
export const handler = queueConsumer('webhookDelivery', processAttemptMessage);
