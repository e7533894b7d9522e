import { queueConsumer } from '../../platform/queue-consumer.js';
import { memoriesFor } from '../../post-call/memories.js';
import { dispatchCall } from '../dispatch.js';

/**
 * Consumer of the `calls` queue: hands each new call to the telephony port. Failures are reported per
 * record; a redelivered message never dials again (the dispatcher claims the call first). Calls of an
 * agent with conversation memories get the summaries of the other party's earlier calls (post-call).
 */
export const handler = queueConsumer('calls', (message) =>
  dispatchCall(message.workspace_id, message.call_id, { memories: memoriesFor }),
);
