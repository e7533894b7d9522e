import { scheduledRun } from '../../platform/logger.js';
import { sweepCalls } from '../sweeper.js';

/** Scheduled: ends calls that never got a terminal callback, re-dispatches lost dispatches, finishes reporting. */
export const handler = scheduledRun(() => sweepCalls());
