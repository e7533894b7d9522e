import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { logger } from '../../platform/logger.js';
import { processAttemptMessage } from '../deliveries.js';

/**
 * Consumer of the `webhookDelivery` queue: one scheduled attempt of one delivery per message,
 * processed in parallel (each attempt is bounded by 15 s). The message of an attempt that left
 * the delivery dead is reported failed on every receive, so the redrive policy moves it to the DLQ.
 */
const AttemptMessage = z.object({
  type: z.literal('webhook.attempt'),
  workspace_id: z.string().min(1),
  delivery_id: z.string().min(1),
  attempt: z.number().int().min(1),
  due_at: z.string().min(1),
});
const processor = new BatchProcessor(EventType.SQS);

async function recordHandler(record: SQSRecord): Promise<void> {
  const message = AttemptMessage.parse(JSON.parse(record.body));
  const outcome = await processAttemptMessage(message);
  logger.info('webhook attempt handled', {
    deliveryId: message.delivery_id,
    attempt: message.attempt,
    outcome,
  });
}

export const handler = async (event: SQSEvent, context: Context) =>
  processPartialResponse(event, recordHandler, processor, {
    context,
    throwOnFullBatchFailure: false,
    processInParallel: true,
  });
