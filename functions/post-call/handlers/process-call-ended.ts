import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../../platform/logger.js';
import { processCallEnded } from '../pipeline.js';
import { CallEndedMessage } from '../schemas.js';

/**
 * Consumer of the `postCall` queue: a call ended → build its record once and queue one message per
 * post-call action. Failures are reported per record; a redelivered message does nothing twice.
 */
const processor = new BatchProcessor(EventType.SQS);

async function recordHandler(record: SQSRecord): Promise<void> {
  const message = CallEndedMessage.parse(JSON.parse(record.body));
  const outcome = await processCallEnded(message);
  logger.info('call.ended handled', {
    callId: message.call_id,
    outcome,
    receiveCount: record.attributes.ApproximateReceiveCount,
  });
}

export const handler = async (event: SQSEvent, context: Context) =>
  processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false });
