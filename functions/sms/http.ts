import { domainHandler } from '../platform/http/index.js';
import { smsRoutes } from './routes.js';

/** The SMS domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(smsRoutes, {
  sendSms: () => import('./handlers/send-sms.js'),
  getSms: () => import('./handlers/get-sms.js'),
  createSmsCampaign: () => import('./handlers/create-sms-campaign.js'),
  listSmsCampaigns: () => import('./handlers/list-sms-campaigns.js'),
  compareSmsCampaigns: () => import('./handlers/compare-sms-campaigns.js'),
  getSmsCampaign: () => import('./handlers/get-sms-campaign.js'),
  updateSmsCampaign: () => import('./handlers/update-sms-campaign.js'),
  deleteSmsCampaign: () => import('./handlers/delete-sms-campaign.js'),
  listSmsInbox: () => import('./handlers/list-sms-inbox.js'),
  getSmsThread: () => import('./handlers/get-sms-thread.js'),
  replySmsThread: () => import('./handlers/reply-sms-thread.js'),
});
