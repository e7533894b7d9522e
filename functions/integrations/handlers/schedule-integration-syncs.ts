import { scheduledRun } from '../../platform/logger.js';
import { syncConnectedIntegrations } from '../service.js';

/** The schedule (EventBridge; locally lib/local/scheduler.ts): an incremental sync of every connected integration. */
export const handler = scheduledRun((): Promise<string> => syncConnectedIntegrations());
