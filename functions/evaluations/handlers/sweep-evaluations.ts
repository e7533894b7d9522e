import { scheduledRun } from '../../platform/logger.js';
import { sweepEvaluationDispatches } from '../service.js';

/** Scheduled: sends the scenario messages of runs charged whose start stopped before sending them. */
export const handler = scheduledRun(() => sweepEvaluationDispatches());
