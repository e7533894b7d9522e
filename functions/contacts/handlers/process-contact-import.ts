import { queueConsumer } from '../../platform/queue-consumer.js';
import { planImport, processChunk } from '../import-worker.js';
import { purgeDeletedContact } from '../purge.js';

/**
 * The `imports` queue: a contact import's plan and chunk steps (functions/contacts/import-worker.ts)
 * and a deleted contact's purge (functions/contacts/purge.ts), each safe to receive twice.
 */
export const handler = queueConsumer('imports', (message) => {
  switch (message.type) {
    case 'contacts.import.plan':
      return planImport(message.workspace_id, message.job_id);
    case 'contacts.import.chunk':
      return processChunk(message.workspace_id, message.job_id, message.chunk);
    case 'contacts.purge':
      return purgeDeletedContact(message.workspace_id, message.contact_id);
  }
});
