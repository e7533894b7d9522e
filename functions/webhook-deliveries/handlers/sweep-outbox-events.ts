import { scheduledRun } from '../../platform/logger.js';
import { sweepOutbox } from '../../platform/outbox.js';

/** Scheduled: publishes workspace events recorded with their write whose request could not publish them. */
export const handler = scheduledRun(() => sweepOutbox());
