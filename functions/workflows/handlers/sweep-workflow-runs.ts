import { scheduledRun } from '../../platform/logger.js';
import { sweepRuns } from '../sweeper.js';

/** Scheduled: puts stalled running runs back on their queue (their message was lost or dead-lettered). */
export const handler = scheduledRun(() => sweepRuns());
