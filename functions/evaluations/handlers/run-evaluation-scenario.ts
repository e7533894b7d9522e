import { queueConsumer } from '../../platform/queue-consumer.js';
import { runScenario } from '../service.js';

/** The `evaluations` queue: one scenario of a run, played as a scripted call and judged (once). */
export const handler = queueConsumer('evaluations', (message) => runScenario(message));
