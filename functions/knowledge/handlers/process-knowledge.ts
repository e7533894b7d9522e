import { queueConsumer } from '../../platform/queue-consumer.js';
import { processDocument } from '../documents.js';
import { buildIndex } from '../search-index.js';

/**
 * The `knowledge` queue: a document's extraction (documents.ts) and a knowledge base's index build
 * (search-index.ts), each safe to receive twice.
 */
export const handler = queueConsumer('knowledge', (message) =>
  message.type === 'knowledge.document'
    ? processDocument(message.workspace_id, message.knowledge_base_id, message.item_id)
    : buildIndex(message.workspace_id, message.knowledge_base_id),
);
