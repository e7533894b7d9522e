import { queueConsumer } from '../../platform/queue-consumer.js';
import { advanceRun } from '../runs.js';

/**
 * The `workflowRuns` queue: each message advances one run as far as it goes alone (functions/workflows/runs.ts);
 * safe to receive twice.
 */
export const handler = queueConsumer('workflowRuns', (message) => advanceRun(message));
