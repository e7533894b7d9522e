import { createConversions } from 'electrodb';
import { Service } from '../platform/entity.js';
import { onFirstUse } from '../platform/first-use.js';
import { BillingAccountEntity } from '../billing/entities.js';
import { PLANS } from '../billing/plans.js';
import { KnowledgeBaseEntity, type KnowledgeBase } from '../knowledge/entities.js';
import { newKnowledgeBase } from '../knowledge/service.js';
import { onePage, type Page } from '../contacts/paging.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound, paymentRequired } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { sendMessage } from '../platform/queue.js';
import { entityConfig, isConditionFailure } from '../platform/table.js';
import { parseOrThrow } from '../platform/validation.js';
import { CRM_CONFIGS, type CrmProviderName } from '../providers/crm/index.js';
import { IntegrationEntity, SyncJobEntity, type Integration, type SyncJob } from './entities.js';
import type { SyncTrigger } from './model.js';

/**
 * Integrations: create, connect (the first full sync into a listings base it makes), sync
 * (incremental from the stored cursor; also on a schedule), disconnect (stops syncing; the synced
 * listings and contacts stay), delete. The sync itself is sync.ts, on the `integrations` queue.
 */

export const INTEGRATION_NOT_FOUND = 'Integration not found';
export const JOB_NOT_FOUND = 'Job not found';
export const PLAN_LACKS_INTEGRATIONS = 'Your plan does not include integrations';

/** Connect writes the integration, its first job and its listings base in one transaction. */
const connectService = new Service(
  { integration: IntegrationEntity, syncJob: SyncJobEntity, knowledgeBase: KnowledgeBaseEntity },
  entityConfig(),
);

/** 402 unless the organisation's plan includes integrations (every write of the family). */
export async function requireIntegrationsPlan(organisationId: string): Promise<void> {
  const { data: account } = await BillingAccountEntity.get({ organisationId }).go();
  const plan = account ? PLANS[account.plan] : undefined;
  if (!plan?.features.integrations) throw paymentRequired(PLAN_LACKS_INTEGRATIONS);
}

export async function getIntegration(
  workspaceId: string,
  integrationId: string,
): Promise<Integration | null> {
  if (!isId('integration', integrationId)) return null;
  const { data } = await IntegrationEntity.get({ workspaceId, integrationId }).go({ consistent: true });
  return data;
}

export async function requireIntegration(workspaceId: string, integrationId: string): Promise<Integration> {
  const integration = await getIntegration(workspaceId, integrationId);
  if (!integration) throw notFound(INTEGRATION_NOT_FOUND);
  return integration;
}

/** Whether an integration sends its listings to this base (the base cannot be deleted then). */
export async function integrationUsesBase(kb: KnowledgeBase): Promise<boolean> {
  if (!kb.integrationId) return false;
  const integration = await getIntegration(kb.workspaceId, kb.integrationId);
  return integration?.knowledgeBaseId === kb.knowledgeBaseId;
}

export async function createIntegration(
  workspace: { workspaceId: string; organisationId: string },
  input: { provider: CrmProviderName; name: string; config: Record<string, unknown> },
): Promise<Integration> {
  const config = parseOrThrow(CRM_CONFIGS[input.provider], input.config, 'body') as Record<string, unknown>;
  const now = clock.now().toISOString();
  const { data } = await IntegrationEntity.create({
    workspaceId: workspace.workspaceId,
    organisationId: workspace.organisationId,
    integrationId: newId('integration'),
    provider: input.provider,
    name: input.name,
    config,
    status: 'created',
    createdAt: now,
    updatedAt: now,
  }).go();
  return data as Integration;
}

const integrationConversions = onFirstUse(() => createConversions(IntegrationEntity));

export async function listIntegrations(
  workspaceId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<Integration>> {
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    run: (options) => IntegrationEntity.query.byId({ workspaceId }).go(options),
    cursorAfter: (i) =>
      integrationConversions().byAccessPattern.byId.fromComposite.toCursor({
        workspaceId,
        integrationId: i.integrationId,
      }),
  });
}

/** Every integration (the schedule's sweep; integrations are few). */
export async function allIntegrations(): Promise<Integration[]> {
  const { data } = await IntegrationEntity.query.all({ scheduleKey: 'INTEGRATIONS' }).go({ pages: 'all' });
  return data;
}

/** Deletes an integration (stops its syncing); its listings base and contacts stay. */
export async function deleteIntegration(workspaceId: string, integrationId: string): Promise<void> {
  await requireIntegration(workspaceId, integrationId);
  await IntegrationEntity.delete({ workspaceId, integrationId }).go();
}

// ── Jobs ────────────────────────────────────────────────────────────────────────────────────────────

export async function getJob(
  workspaceId: string,
  integrationId: string,
  jobId: string,
): Promise<SyncJob | null> {
  if (!isId('job', jobId)) return null;
  const { data } = await SyncJobEntity.get({ workspaceId, integrationId, jobId }).go({ consistent: true });
  return data;
}

export async function requireJob(
  workspaceId: string,
  integrationId: string,
  jobId: string,
): Promise<SyncJob> {
  const job = await getJob(workspaceId, integrationId, jobId);
  if (!job) throw notFound(JOB_NOT_FOUND);
  return job;
}

const jobConversions = onFirstUse(() => createConversions(SyncJobEntity));

export async function listJobs(
  workspaceId: string,
  integrationId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<SyncJob>> {
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    order: 'desc',
    run: (options) => SyncJobEntity.query.byIntegration({ workspaceId, integrationId }).go(options),
    cursorAfter: (job) =>
      jobConversions().byAccessPattern.byIntegration.fromComposite.toCursor({
        workspaceId,
        integrationId,
        jobId: job.jobId,
      }),
  });
}

export const sendPage = (job: Pick<SyncJob, 'workspaceId' | 'integrationId' | 'jobId'>, delaySeconds = 0) =>
  sendMessage(
    'integrations',
    {
      type: 'integrations.sync.page',
      workspace_id: job.workspaceId,
      integration_id: job.integrationId,
      job_id: job.jobId,
    },
    { delaySeconds },
  );

function newJob(integration: Integration, trigger: SyncTrigger): SyncJob {
  const now = clock.now().toISOString();
  return {
    workspaceId: integration.workspaceId,
    integrationId: integration.integrationId,
    jobId: newId('job'),
    // A first-time connect's full sync (and its retries, until one completes) publishes no events.
    kind: integration.initialSyncDone ? 'incremental' : 'initial',
    trigger,
    status: 'processing',
    ...(integration.cursor ? { startCursor: integration.cursor, cursor: integration.cursor } : {}),
    pages: 0,
    records: 0,
    listings: 0,
    listingsCreated: 0,
    contacts: 0,
    contactsCreated: 0,
    contactsMerged: 0,
    rejected: 0,
    listingSold: 0,
    listingsDeleted: 0,
    contactsDeleted: 0,
    cursorResets: 0,
    attempts: 0,
    retries: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** The job running now, if any (sent on again, in case its message was lost). */
async function runningJob(integration: Integration): Promise<SyncJob | undefined> {
  if (!integration.activeJobId) return undefined;
  const job = await getJob(integration.workspaceId, integration.integrationId, integration.activeJobId);
  if (job?.status !== 'processing') return undefined;
  return job;
}

/**
 * Connect: the integration becomes `connected` and a sync starts (202). The first connect makes
 * the listings base (named after the integration) in the same transaction and runs the full sync;
 * a reconnect catches up from the stored cursor (an incremental sync, with events). Connecting a
 * connected integration answers its running job, or starts a sync.
 */
export async function connectIntegration(workspaceId: string, integrationId: string): Promise<SyncJob> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const integration = await requireIntegration(workspaceId, integrationId);
    if (integration.status === 'connected') return startSync(integration, 'connect');
    const running = await runningJob(integration);
    const job = newJob(integration, 'connect');
    const kb = integration.knowledgeBaseId
      ? undefined
      : newKnowledgeBase(workspaceId, {
          name: `${integration.name} listings`,
          kind: 'listings',
          integrationId,
        });
    const now = clock.now().toISOString();
    const result = await connectService.transaction
      .write(({ integration: tx, syncJob, knowledgeBase }) => [
        tx
          .patch({ workspaceId, integrationId })
          .set({
            status: 'connected',
            activeJobId: running?.jobId ?? job.jobId,
            connectedAt: now,
            updatedAt: now,
            ...(kb ? { knowledgeBaseId: kb.knowledgeBaseId } : {}),
          })
          .where((attr, op) =>
            [
              op.eq(attr.status, integration.status),
              kb
                ? op.notExists(attr.knowledgeBaseId)
                : op.eq(attr.knowledgeBaseId, integration.knowledgeBaseId!),
              integration.activeJobId
                ? op.eq(attr.activeJobId, integration.activeJobId)
                : op.notExists(attr.activeJobId),
            ].join(' AND '),
          )
          .commit(),
        ...(running ? [] : [syncJob.create(job).commit()]),
        ...(kb ? [knowledgeBase.create(kb).commit()] : []),
      ])
      .go();
    if (result.canceled) continue; // changed meanwhile: decide again
    const started = running ?? job;
    await sendPage(started);
    return started;
  }
  throw conflict('The integration is changing: try again');
}

/**
 * Sync: an incremental sync from the stored cursor (202); the running job when one runs. 409 when
 * the integration is not connected.
 */
export async function startSync(
  integration: Integration,
  trigger: SyncTrigger,
  options: { send?: boolean } = {},
): Promise<SyncJob> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const current =
      attempt === 0
        ? integration
        : await requireIntegration(integration.workspaceId, integration.integrationId);
    if (current.status !== 'connected') throw conflict('The integration is not connected: connect it first');
    const running = await runningJob(current);
    if (running) {
      await sendPage(running);
      return running;
    }
    const job = newJob(current, trigger);
    const { workspaceId, integrationId } = current;
    const result = await connectService.transaction
      .write(({ integration: tx, syncJob }) => [
        tx
          .patch({ workspaceId, integrationId })
          .set({ activeJobId: job.jobId, updatedAt: clock.now().toISOString() })
          .where((attr, op) =>
            [
              op.eq(attr.status, 'connected'),
              current.activeJobId
                ? op.eq(attr.activeJobId, current.activeJobId)
                : op.notExists(attr.activeJobId),
            ].join(' AND '),
          )
          .commit(),
        syncJob.create(job).commit(),
      ])
      .go();
    if (result.canceled) continue;
    if (options.send !== false) await sendPage(job);
    return job;
  }
  throw conflict('The integration is changing: try again');
}

/** Disconnect: no more syncs (a running job stops at its next page); the synced data stays. */
export async function disconnectIntegration(
  workspaceId: string,
  integrationId: string,
): Promise<Integration> {
  await requireIntegration(workspaceId, integrationId);
  const now = clock.now().toISOString();
  try {
    const { data } = await IntegrationEntity.patch({ workspaceId, integrationId })
      .set({ status: 'disconnected', disconnectedAt: now, updatedAt: now })
      .go({ response: 'all_new' });
    return data as Integration;
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(INTEGRATION_NOT_FOUND);
    throw error;
  }
}

/**
 * How long after a sync ended the schedule leaves an integration alone (INTEGRATION_SYNC_EVERY_SECONDS,
 * default 600): a sync someone just ran (connect, POST …/sync) is not repeated at once, and a
 * schedule that fires often (locally every minute) syncs each integration at most this often.
 */
const syncEverySeconds = () => Number(process.env.INTEGRATION_SYNC_EVERY_SECONDS ?? 600) || 600;

/** The schedule: an incremental sync of every connected integration that runs none and was not synced lately. */
export async function syncConnectedIntegrations(): Promise<string> {
  let started = 0;
  const since = clock.now().getTime() - syncEverySeconds() * 1000;
  for (const integration of await allIntegrations()) {
    if (integration.status !== 'connected') continue;
    const last = integration.lastSync as { completed_at?: string | null } | undefined;
    const lastAt = Date.parse(last?.completed_at ?? integration.connectedAt ?? '');
    if (lastAt > since) continue;
    if (await runningJob(integration)) continue;
    try {
      await startSync(integration, 'schedule');
      started += 1;
    } catch (error) {
      if (!(error instanceof Error && 'status' in error)) throw error;
    }
  }
  return `started ${started} syncs`;
}
