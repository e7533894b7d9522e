import { domainHandler } from '../platform/http/index.js';
import { campaignRoutes } from './routes.js';

/** The campaigns domain's one HTTP function: every route of ./routes.ts. */
export const handler = domainHandler(campaignRoutes, {
  createCampaign: () => import('./handlers/create-campaign.js'),
  listCampaigns: () => import('./handlers/list-campaigns.js'),
  getCampaign: () => import('./handlers/get-campaign.js'),
  updateCampaign: () => import('./handlers/update-campaign.js'),
  deleteCampaign: () => import('./handlers/delete-campaign.js'),
  createCampaignUpload: () => import('./handlers/create-campaign-upload.js'),
  startCampaignUpload: () => import('./handlers/start-campaign-upload.js'),
  listCampaignContacts: () => import('./handlers/list-campaign-contacts.js'),
  listCampaignJobs: () => import('./handlers/list-campaign-jobs.js'),
  getCampaignJob: () => import('./handlers/get-campaign-job.js'),
  getCampaignProgress: () => import('./handlers/get-campaign-progress.js'),
});
