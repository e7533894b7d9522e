import { domainHandler } from '../platform/http/index.js';
import { smsRoutes } from './routes.js';
import { handler as sendSms } from './handlers/send-sms.js';
import { handler as getSms } from './handlers/get-sms.js';
import { handler as createSmsCampaign } from './handlers/create-sms-campaign.js';
import { handler as listSmsCampaigns } from './handlers/list-sms-campaigns.js';
import { handler as compareSmsCampaigns } from './handlers/compare-sms-campaigns.js';
import { handler as getSmsCampaign } from './handlers/get-sms-campaign.js';
import { handler as updateSmsCampaign } from './handlers/update-sms-campaign.js';
import { handler as deleteSmsCampaign } from './handlers/delete-sms-campaign.js';
import { handler as listSmsInbox } from './handlers/list-sms-inbox.js';
import { handler as getSmsThread } from './handlers/get-sms-thread.js';
import { handler as replySmsThread } from './handlers/reply-sms-thread.js';

/** The SMS domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(smsRoutes, {
  sendSms,
  getSms,
  createSmsCampaign,
  listSmsCampaigns,
  compareSmsCampaigns,
  getSmsCampaign,
  updateSmsCampaign,
  deleteSmsCampaign,
  listSmsInbox,
  getSmsThread,
  replySmsThread,
});
