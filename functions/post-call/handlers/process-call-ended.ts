import { queueConsumer } from '../../platform/queue-consumer.js';
import { processCallEnded } from '../pipeline.js';

/**
 * Consumer of the `postCall` queue: a call ended → build its record once and queue one message per
 * post-call action. Failures are reported per record; a redelivered message does nothing twice.
 */
export const handler = queueConsumer('postCall', processCallEnded);
