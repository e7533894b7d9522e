import { sweepEvaluationDispatches } from '../service.js';

/** Scheduled: sends the scenario messages of runs charged whose start stopped before sending them. */
export const handler = async () => sweepEvaluationDispatches();
