import { queueConsumer } from '../../platform/queue-consumer.js';
import { runAction } from '../actions/run.js';

/**
 * Consumer of the `postCallActions` queue: one post-call action of one call per message (SMS,
 * email, webhook, contact update, profile enrichment). A failing action fails only its own message.
 */
export const handler = queueConsumer('postCallActions', runAction);
