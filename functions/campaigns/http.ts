import { domainHandler } from '../platform/http/index.js';
import { campaignRoutes } from './routes.js';
import { handler as createCampaign } from './handlers/create-campaign.js';
import { handler as listCampaigns } from './handlers/list-campaigns.js';
import { handler as getCampaign } from './handlers/get-campaign.js';
import { handler as updateCampaign } from './handlers/update-campaign.js';
import { handler as deleteCampaign } from './handlers/delete-campaign.js';
import { handler as createCampaignUpload } from './handlers/create-campaign-upload.js';
import { handler as startCampaignUpload } from './handlers/start-campaign-upload.js';
import { handler as listCampaignContacts } from './handlers/list-campaign-contacts.js';
import { handler as listCampaignJobs } from './handlers/list-campaign-jobs.js';
import { handler as getCampaignJob } from './handlers/get-campaign-job.js';
import { handler as getCampaignProgress } from './handlers/get-campaign-progress.js';

/** The campaigns domain's one HTTP function: every route of ./routes.ts. */
export const handler = domainHandler(campaignRoutes, {
  createCampaign,
  listCampaigns,
  getCampaign,
  updateCampaign,
  deleteCampaign,
  createCampaignUpload,
  startCampaignUpload,
  listCampaignContacts,
  listCampaignJobs,
  getCampaignJob,
  getCampaignProgress,
});
