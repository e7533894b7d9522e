import { api, type ApiResponse, type Json } from '../../helpers/http.js';
import { allPages } from '../../helpers/pages.js';
import { waitFor } from '../../helpers/wait.js';
import { ws, type Tenant } from '../calling/fixtures.js';

/**
 * Campaigns through the gateway: tenants, agents and numbers are the calling suite's fixtures; every
 * campaign, upload and status change goes through the routes under test.
 */
export {
  addMember,
  apiKey,
  createAgent,
  newTenant,
  numberFor,
  readyToCall,
  setBalance,
  setConcurrencyLimit,
  setPlan,
  TEST_NUMBERS,
  ws,
  type Tenant,
  type User,
} from '../calling/fixtures.js';

export const campaignsPath = (tenant: Tenant) => `${ws(tenant)}/campaigns`;
export const campaignPath = (tenant: Tenant, id: string) => `${campaignsPath(tenant)}/${id}`;

/** A window open at any time (UTC, every day, 00:00–23:59). */
export const ALWAYS_OPEN = {
  timezone: 'UTC',
  days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
  start: '00:00',
  end: '23:59',
};

/** A valid Australian mobile number that the simulator answers, a new one each call. */
let sequence = Math.floor(Math.random() * 400_000) + 100_000;
export function uniqueMobile(): string {
  sequence += 1;
  return `+61492${String(sequence % 1_000_000).padStart(6, '0')}`;
}

export async function createCampaign(
  tenant: Tenant,
  body: Record<string, unknown>,
  token = tenant.owner.token,
): Promise<Json> {
  const res = await api('POST', campaignsPath(tenant), {
    token,
    body: { name: 'Spring appraisals', calling_window: ALWAYS_OPEN, ...body },
  });
  if (res.status !== 201) throw new Error(`create campaign: ${res.status} ${res.text}`);
  return res.body;
}

export async function upload(tenant: Tenant, campaignId: string, csv: string, token = tenant.owner.token) {
  return api('POST', `${campaignPath(tenant, campaignId)}/uploads`, {
    token,
    rawBody: csv,
    headers: { 'content-type': 'text/csv' },
  });
}

/** Uploads and waits for the job to end; returns the job with its errors. */
export async function uploadAndWait(tenant: Tenant, campaignId: string, csv: string): Promise<Json> {
  const res = await upload(tenant, campaignId, csv);
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${res.text}`);
  return waitFor(
    async () => {
      const job = await api('GET', `${campaignPath(tenant, campaignId)}/jobs/${res.body.id}`, {
        token: tenant.owner.token,
      });
      return job.body.status === 'completed' || job.body.status === 'failed' ? job.body : undefined;
    },
    { what: 'the upload to finish', timeoutMs: 180_000 },
  );
}

export async function patchCampaign(
  tenant: Tenant,
  campaignId: string,
  body: Record<string, unknown>,
  token = tenant.owner.token,
): Promise<ApiResponse> {
  return api('PATCH', campaignPath(tenant, campaignId), { token, body });
}

export async function progress(tenant: Tenant, campaignId: string): Promise<Json> {
  const res = await api('GET', `${campaignPath(tenant, campaignId)}/progress`, { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`progress: ${res.status} ${res.text}`);
  return res.body;
}

export async function campaign(tenant: Tenant, campaignId: string): Promise<Json> {
  const res = await api('GET', campaignPath(tenant, campaignId), { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`campaign: ${res.status} ${res.text}`);
  return res.body;
}

/** Every batch contact (all pages), optionally in one state. */
export const batchContacts = (tenant: Tenant, campaignId: string, state?: string): Promise<Json[]> =>
  allPages(`${campaignPath(tenant, campaignId)}/contacts`, tenant.owner.token, state ? { state } : {});

/** Waits for the campaign to reach a status (default completed). */
export async function waitForStatus(
  tenant: Tenant,
  campaignId: string,
  status = 'completed',
  timeoutMs = 180_000,
): Promise<Json> {
  let last: Json | undefined;
  return waitFor(
    async () => {
      last = await campaign(tenant, campaignId);
      return last.status === status ? last : undefined;
    },
    {
      what: () => `campaign ${campaignId} to be ${status}; last: ${JSON.stringify(last)}`,
      timeoutMs,
      intervalMs: 250,
    },
  );
}

/** The workspace's calls of a campaign (call log filter campaign_id), all pages. */
export const campaignCalls = (tenant: Tenant, campaignId: string): Promise<Json[]> =>
  allPages(`${ws(tenant)}/calls`, tenant.owner.token, { campaign_id: campaignId });

export const csvOf = (rows: string[][]) => rows.map((r) => r.join(',')).join('\n') + '\n';
