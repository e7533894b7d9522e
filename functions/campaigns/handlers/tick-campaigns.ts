import { scheduledRun } from '../../platform/logger.js';
import { tickCampaigns } from '../dialer.js';

/** The dialer's schedule: one `campaign.dial` message per campaign with work (functions/campaigns/dialer.ts). */
export const handler = scheduledRun(() => tickCampaigns());
