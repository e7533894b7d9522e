import { queueConsumer } from '../../platform/queue-consumer.js';
import { planImport, processChunk } from '../import-worker.js';

/**
 * The `imports` queue: a contact import's plan and chunk steps (functions/contacts/import-worker.ts),
 * each safe to receive twice.
 */
export const handler = queueConsumer('imports', (message) =>
  message.type === 'contacts.import.plan'
    ? planImport(message.workspace_id, message.job_id)
    : processChunk(message.workspace_id, message.job_id, message.chunk),
);
