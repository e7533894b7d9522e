import { sweepOutbox } from '../../platform/outbox.js';

/** Scheduled: publishes workspace events recorded with their write whose request could not publish them. */
export const handler = async () => sweepOutbox();
