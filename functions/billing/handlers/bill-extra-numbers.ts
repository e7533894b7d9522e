import { countNumbers } from '../../numbers/inventory.js';
import { logger, scheduledRun } from '../../platform/logger.js';
import { billExtraNumbers } from '../extra-numbers.js';

/**
 * Scheduled (EventBridge): bills phone numbers beyond each paid plan's included ones, once per cycle.
 * The numbers domain counts them (billing sits below numbers and is handed the count).
 */
export const handler = scheduledRun(async (): Promise<Record<string, number>> => {
  const counts = await billExtraNumbers(countNumbers);
  if (counts.billed > 0 || counts.failed > 0) logger.info('extra number billing run', counts);
  if (counts.failed > 0)
    throw new Error(`${counts.failed} extra-number bill(s) failed; the next run retries them`);
  return counts;
});
