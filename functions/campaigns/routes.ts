import { defineRoute } from '../platform/http/route.js';
import * as campaigns from './schemas.js';

const CAMPAIGNS = '/api/v1/workspaces/{workspace_id}/campaigns';
const CAMPAIGN = `${CAMPAIGNS}/{campaign_id}`;

/**
 * Batch outbound campaigns (plan feature `batch_outbound`: creating, starting and uploading need it,
 * 402 otherwise). Any workspace role reads; members and admins write (viewers 403). API keys of the
 * workspace with `campaigns:read` / `campaigns:write`.
 */
export const campaignRoutes = {
  createCampaign: defineRoute({
    method: 'POST',
    path: CAMPAIGNS,
    summary: 'Create a campaign',
    description:
      'Create a campaign (member; plan feature batch_outbound, else 402): {name, agent_id, from_phone?, calling_window?, ' +
      'retry?, max_concurrency?} → 201, status draft. 422 when the agent has no number and no from_phone is given, ' +
      'from_phone is not the agent’s, max_concurrency is above the workspace’s concurrent_call_limit, the window ends ' +
      'before it starts or names an unknown timezone, or retry is out of range',
    auth: 'user_or_api_key',
    scope: 'campaigns:write',
    body: campaigns.CreateCampaignBody,
    response: campaigns.CampaignResponse,
    successStatus: 201,
    errors: { 402: 'Your plan does not include batch outbound' },
    access: { table: 'readwrite' },
  }),
  listCampaigns: defineRoute({
    method: 'GET',
    path: CAMPAIGNS,
    summary: 'List campaigns',
    description: 'The workspace’s campaigns, newest first; filter status (viewer)',
    auth: 'user_or_api_key',
    scope: 'campaigns:read',
    query: campaigns.CampaignListQuery,
    response: campaigns.CampaignList,
    access: { table: 'readwrite' },
  }),
  getCampaign: defineRoute({
    method: 'GET',
    path: CAMPAIGN,
    summary: 'Get a campaign',
    description: 'A campaign with its progress (viewer)',
    auth: 'user_or_api_key',
    scope: 'campaigns:read',
    response: campaigns.CampaignResponse,
    access: { table: 'readwrite' },
  }),
  updateCampaign: defineRoute({
    method: 'PATCH',
    path: CAMPAIGN,
    summary: 'Update a campaign',
    description:
      'Start, pause, resume or cancel a campaign ({status: running|paused|cancelled}) and/or change its name, ' +
      'calling_window, retry or max_concurrency (member). 409 for a completed or cancelled campaign, a transition ' +
      'that does not exist, or starting one with no contacts to call. A new calling_window (or a resume) re-plans ' +
      'the contacts the old window deferred; next_dial_at / next_dial_reason say when the next call is placed',
    auth: 'user_or_api_key',
    scope: 'campaigns:write',
    body: campaigns.UpdateCampaignBody,
    response: campaigns.CampaignResponse,
    errors: {
      402: 'Your plan does not include batch outbound (starting or resuming)',
      409: 'The campaign cannot make this change in its state (or changed meanwhile)',
    },
    access: { table: 'readwrite', sendsTo: ['campaigns'] },
  }),
  deleteCampaign: defineRoute({
    method: 'DELETE',
    path: CAMPAIGN,
    summary: 'Delete a campaign',
    description:
      'Delete a campaign and its batch contacts; 409 while it runs or has calls under way (member)',
    auth: 'user_or_api_key',
    scope: 'campaigns:write',
    successStatus: 204,
    errors: { 409: 'The campaign has calls under way or to place' },
    access: { table: 'readwrite' },
  }),
  createCampaignUpload: defineRoute({
    method: 'POST',
    path: `${CAMPAIGN}/uploads`,
    summary: 'Create a campaign upload',
    description:
      'Add batch contacts from a CSV (member; batch_outbound): a phone column (or contact_id) and any parameter ' +
      'columns. The CSV as a text/csv body (at most 5 MB) starts at once; JSON {format: csv, file_name?} gives a ' +
      'pending job and upload_url (PUT the file, then POST …/uploads/{job_id}/start). 202 with the import job: ' +
      'created = batch contacts added (do-not-call ones as skipped_dnc), merged = rows repeating a number already in ' +
      'the campaign, rejected = invalid numbers (row, reason). A row lacking a {{parameter}} of the agent’s prompt is ' +
      'taken with the parameter empty (as start-call fills it) and listed in the job’s and the campaign’s warnings',
    auth: 'user_or_api_key',
    scope: 'campaigns:write',
    body: campaigns.CreateUploadBody,
    rawBody: ['text/csv'],
    response: campaigns.CreatedUploadResponse,
    successStatus: 202,
    errors: {
      402: 'Your plan does not include batch outbound',
      409: 'The campaign takes no more contacts in its state',
    },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['campaigns'] },
  }),
  startCampaignUpload: defineRoute({
    method: 'POST',
    path: `${CAMPAIGN}/uploads/{job_id}/start`,
    summary: 'Start a campaign upload',
    description:
      'Start a pending upload once its file is at upload_url (member): 409 when it is not there yet, 413 over 50 MB',
    auth: 'user_or_api_key',
    scope: 'campaigns:write',
    response: campaigns.CampaignJobResponse,
    successStatus: 202,
    errors: { 409: 'The file has not been uploaded yet', 413: 'The uploaded file is over 50 MB' },
    access: { table: 'readwrite', bucket: 'read', sendsTo: ['campaigns'] },
  }),
  listCampaignContacts: defineRoute({
    method: 'GET',
    path: `${CAMPAIGN}/contacts`,
    summary: "List a campaign's contacts",
    description:
      'The campaign’s batch contacts in upload order, or those in one state (filter state; then by next_attempt_at) ' +
      '(viewer)',
    auth: 'user_or_api_key',
    scope: 'campaigns:read',
    query: campaigns.BatchContactListQuery,
    response: campaigns.BatchContactList,
    access: { table: 'readwrite' },
  }),
  listCampaignJobs: defineRoute({
    method: 'GET',
    path: `${CAMPAIGN}/jobs`,
    summary: "List a campaign's upload jobs",
    description:
      'The campaign’s upload jobs (newest first) and its run job (from its start: progress = share of contacts done; ' +
      'counts.created = completed, merged = skipped, rejected = failed) (viewer)',
    auth: 'user_or_api_key',
    scope: 'campaigns:read',
    response: campaigns.CampaignJobList,
    access: { table: 'readwrite' },
  }),
  getCampaignJob: defineRoute({
    method: 'GET',
    path: `${CAMPAIGN}/jobs/{job_id}`,
    summary: 'Get a campaign upload job',
    description:
      'One of the campaign’s jobs; an upload with its first 100 rejected rows and its warnings (parameters rows ' +
      'lacked) (viewer)',
    auth: 'user_or_api_key',
    scope: 'campaigns:read',
    response: campaigns.CampaignJobResponse,
    access: { table: 'readwrite' },
  }),
  getCampaignProgress: defineRoute({
    method: 'GET',
    path: `${CAMPAIGN}/progress`,
    summary: "Get a campaign's progress",
    description:
      'Counts of the campaign’s batch contacts by state and the credits its calls used: {total, pending, calling, ' +
      'completed, failed, skipped, retry_scheduled, cancelled, credits_used} (viewer)',
    auth: 'user_or_api_key',
    scope: 'campaigns:read',
    response: campaigns.CampaignProgress,
    access: { table: 'readwrite' },
  }),
};
