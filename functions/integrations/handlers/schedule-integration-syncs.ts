import { syncConnectedIntegrations } from '../service.js';

/** The schedule (EventBridge; locally lib/local/scheduler.ts): an incremental sync of every connected integration. */
export const handler = async (): Promise<string> => syncConnectedIntegrations();
