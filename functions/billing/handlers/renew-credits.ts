import { logger, scheduledRun } from '../../platform/logger.js';
import { renewDueAccounts } from '../renewal.js';

/** Scheduled (EventBridge): renews the credits of every account whose monthly period has ended. */
export const handler = scheduledRun(async (): Promise<Record<string, number>> => {
  const counts = await renewDueAccounts();
  if (counts.renewed > 0 || counts.failed > 0) logger.info('credit renewal run', counts);
  if (counts.failed > 0) throw new Error(`${counts.failed} renewal(s) failed; the next run retries them`);
  return counts;
});
