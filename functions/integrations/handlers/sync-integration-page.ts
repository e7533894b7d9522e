import { queueConsumer } from '../../platform/queue-consumer.js';
import { syncPage } from '../sync.js';

/** The `integrations` queue: one page of a sync job (functions/integrations/sync.ts), safe to receive twice. */
export const handler = queueConsumer('integrations', (message) =>
  syncPage(message.workspace_id, message.integration_id, message.job_id),
);
