import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../../platform/logger.js';
import { runAction } from '../actions.js';
import { ActionMessage } from '../schemas.js';

/**
 * Consumer of the `postCallActions` queue: one post-call action of one call per message (SMS,
 * email, webhook, contact update, profile enrichment). A failing action fails only its own message.
 */
const processor = new BatchProcessor(EventType.SQS);

async function recordHandler(record: SQSRecord): Promise<void> {
  const message = ActionMessage.parse(JSON.parse(record.body));
  const outcome = await runAction(message);
  logger.info('post-call action handled', { callId: message.call_id, actionId: message.action_id, outcome });
}

export const handler = async (event: SQSEvent, context: Context) =>
  processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false });
