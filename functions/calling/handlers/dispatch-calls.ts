import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { logger } from '../../platform/logger.js';
import { dispatchCall } from '../dispatch.js';

/**
 * Consumer of the `calls` queue: hands each new call to the telephony port. Failures are reported per
 * record; a redelivered message never dials again (the dispatcher claims the call first).
 */
const DispatchMessage = z.object({
  type: z.literal('call.dispatch'),
  call_id: z.string(),
  workspace_id: z.string(),
});
const processor = new BatchProcessor(EventType.SQS);

async function recordHandler(record: SQSRecord): Promise<void> {
  const message = DispatchMessage.parse(JSON.parse(record.body));
  const outcome = await dispatchCall(message.workspace_id, message.call_id);
  logger.info('call dispatch', { callId: message.call_id, outcome });
}

export const handler = async (event: SQSEvent, context: Context) =>
  processPartialResponse(event, recordHandler, processor, { context });
