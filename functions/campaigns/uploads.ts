import { AgentEntity } from '../agents/entities.js';
import { ContactImportRowEntity, type Contact, type ContactImport } from '../contacts/entities.js';
import {
  recordRowOutcome,
  rowRecordBase,
  type ImportPipeline,
  type RowRecordBase,
} from '../contacts/import-pipeline.js';
import { importIssues, importView, listImports } from '../contacts/imports.js';
import type { ParsedRow } from '../contacts/import-parse.js';
import type { ContactInput } from '../contacts/schemas.js';
import { normaliseAttributeKey } from '../contacts/model.js';
import { createContactsTogether, newAmong } from '../contacts/bulk-creation.js';
import { validateContactInput } from '../contacts/input.js';
import { findContactByPhone, getContact } from '../contacts/lookup.js';
import { ensureContact } from '../contacts/post-call-changes.js';
import { isSuppressed, suppressedAmong } from '../contacts/suppression.js';
import { clock } from '../platform/clock.js';
import { textProblem } from '../platform/validation.js';
import { conflict } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { inParallel } from '../platform/parallel.js';
import { toE164InCountry } from '../platform/phone.js';
import { sendMessage, sendMessages } from '../platform/queue.js';
import { COUNTER_SHARDS, DUE_NOW, type Campaign } from './entities.js';
import { doNotCall } from './dialer-reads.js';
import { agentParameters, getCampaign, transact, type Progress } from './service.js';

/**
 * A campaign's uploads: the contact imports' jobs (functions/contacts/imports.ts — the same job
 * statuses, progress, counts, chunks and exactly-once rows), carried on the `campaigns` queue, each
 * row becoming one batch contact:
 * - the row's `phone` (read in the workspace's country) or `contact_id` (a contact of the workspace,
 *   with a phone number); otherwise the row is rejected with its reason;
 * - its parameters are its other columns (as headed), filled from its contact (first_name, last_name,
 *   email, attributes) where a column is missing; a `{{name}}` of the agent's prompt or greeting that
 *   neither gives is left empty, as start-call and SMS leave it (one rule for the product), and the
 *   row is recorded with it (`missingParameters`): the job's and the campaign's `warnings` list each
 *   such parameter with its rows, before any dial;
 * - a number already in the campaign is dropped and counted `merged`;
 * - the contact with that number is linked, or one is created (source CSV);
 * - a contact that is do-not-contact or unsubscribed, or a number on the organisation's suppression
 *   list, becomes a batch contact in `skipped_dnc` (counted `created`, never dialled).
 * The row's outcome record, the campaign's phone key, the batch contact and its counter shard are one
 * transaction, created with "does not exist": a redelivered chunk adds nothing twice.
 */

interface Context {
  campaign: Campaign;
  parameters: string[];
}

const shardOf = (id: string): number => [...id].reduce((sum, c) => sum + c.charCodeAt(0), 0) % COUNTER_SHARDS;

export function campaignPipeline(workspaceId: string, campaignId: string): ImportPipeline {
  let context: Promise<Context | undefined> | undefined;
  const load = async (): Promise<Context | undefined> => {
    const campaign = await getCampaign(workspaceId, campaignId);
    if (!campaign) return undefined;
    const { data: agent } = await AgentEntity.get({ workspaceId, agentId: campaign.agentId }).go();
    return { campaign, parameters: agent ? agentParameters(agent) : [] };
  };
  return {
    campaignId,
    parse: { contactIdColumn: true },
    sendPlan: (job) =>
      sendMessage('campaigns', {
        type: 'campaign.upload.plan',
        workspace_id: job.workspaceId,
        campaign_id: campaignId,
        job_id: job.jobId,
      }),
    sendChunks: (job, chunks) =>
      sendMessages(
        'campaigns',
        chunks.map((chunk) => ({
          type: 'campaign.upload.chunk' as const,
          workspace_id: job.workspaceId,
          campaign_id: campaignId,
          job_id: job.jobId,
          chunk,
        })),
      ),
    decideRow: async (job, row, record) => {
      context ??= load();
      const ctx = await context;
      if (!ctx) throw new Error(`campaign ${campaignId} is gone; its upload stops here`);
      await decideRow(ctx, job, row, record);
    },
    decideInBulk: async (job, rows, step) => {
      context ??= load();
      const ctx = await context;
      if (!ctx) throw new Error(`campaign ${campaignId} is gone; its upload stops here`);
      return decideInBulk(ctx, job, rows, step);
    },
  };
}

/** Uploads go to a campaign that is not over (409 otherwise). */
export function requireOpenForUploads(campaign: Campaign): void {
  if (campaign.status === 'completed' || campaign.status === 'cancelled')
    throw conflict(`The campaign is ${campaign.status}: it takes no more contacts`);
}

const clip = (value: string, length: number) =>
  value.length > length ? `${value.slice(0, length)}…` : value;

/**
 * The row's parameters: its columns, then what its contact knows. Attribute columns and a contact's
 * attributes are keyed by their normalised names (`Listing Address` → `listing_address`): each of the
 * agent's `{{names}}` is also given under its own spelling.
 */
function parametersOf(row: ParsedRow, contact: Contact | null, names: string[]): Record<string, string> {
  const f = row.fields;
  const fromContact: Record<string, string | undefined> = {
    first_name: contact?.firstName,
    last_name: contact?.lastName,
    email: contact?.email,
    ...((contact?.customAttributes ?? {}) as Record<string, string>),
  };
  const fromRow: Record<string, string | undefined> = {
    first_name: f.first_name,
    last_name: f.last_name,
    email: f.email,
    ...(f.attributes ?? {}),
  };
  // A `name` column is read as first and last name (import-parse.ts): `{{name}}` is the full name.
  const full = (first?: string, last?: string) => [first, last].filter(Boolean).join(' ') || undefined;
  fromContact.name = full(contact?.firstName, contact?.lastName) ?? contact?.name;
  fromRow.name = full(f.first_name, f.last_name) ?? f.attributes?.name;
  const parameters: Record<string, string> = {};
  for (const source of [fromContact, fromRow])
    for (const [key, value] of Object.entries(source))
      if (typeof value === 'string' && value.trim()) parameters[key] = value.slice(0, 1000);
  for (const name of names) {
    const value = parameters[name] ?? parameters[normaliseAttributeKey(name)];
    if (value !== undefined) parameters[name] = value;
  }
  return Object.fromEntries(Object.entries(parameters).slice(0, 50));
}

/**
 * Why the row's own values cannot be a call's parameters (the text rules of start-call's
 * `parameters`: platform/validation.ts), or undefined. A contact's stored values were checked when
 * they were written.
 */
export function rowParameterProblem(row: ParsedRow): string | undefined {
  const f = row.fields;
  const values: Record<string, string | undefined> = {
    first_name: f.first_name,
    last_name: f.last_name,
    email: f.email,
    ...(f.attributes ?? {}),
  };
  for (const [name, value] of Object.entries(values)) {
    const problem =
      textProblem(name, 'label') ?? (value === undefined ? undefined : textProblem(value, 'parameter'));
    if (problem) return `column "${clip(name, 40)}" ${problem}`;
  }
  return undefined;
}

async function decideRow(
  ctx: Context,
  job: ContactImport,
  row: ParsedRow,
  record: RowRecordBase,
): Promise<void> {
  const reject = (reason: string) => recordRowOutcome({ ...record, outcome: 'rejected', reason });
  const { campaign } = ctx;
  const workspaceId = job.workspaceId;
  const f = row.fields;
  const unfit = rowParameterProblem(row);
  if (unfit) return reject(unfit);
  let contact: Contact | null = null;
  let phone: string | undefined;
  if (f.contact_id) {
    contact = isId('contact', f.contact_id) ? await getContact(workspaceId, f.contact_id) : null;
    if (!contact) return reject(`contact_id "${clip(f.contact_id, 40)}" is not a contact of this workspace`);
    phone = contact.phone;
    if (!phone) return reject(`contact ${f.contact_id} has no phone number`);
  } else if (f.phone) {
    phone = toE164InCountry(f.phone, job.country);
    if (!phone) return reject(`phone "${clip(f.phone, 40)}" is not a valid phone number`);
    contact = await findContactByPhone(workspaceId, phone);
  } else {
    return reject('no phone number or contact_id');
  }
  const parameters = parametersOf(row, contact, ctx.parameters);
  const missing = ctx.parameters.filter((name) => !parameters[name]);
  if (!contact) {
    const name = [f.first_name, f.last_name].filter(Boolean).join(' ') || undefined;
    ({ contact } = await ensureContact(workspaceId, { phone, name, source: 'CSV' }));
  }
  const dnc = doNotCall(contact, await isSuppressed(campaign.organisationId, phone));
  const state = stateFor(campaign, dnc);
  const batchContactId = newId('batchContact');
  const shard = shardOf(batchContactId);
  const now = clock.now().toISOString();
  const counter = counterFor(state);
  const { canceled, codes } = await transact((tx) => [
    tx.contactImportRow
      .create({
        ...record,
        outcome: 'created',
        contactId: contact.contactId,
        ...(missing.length > 0 ? { missingParameters: missing } : {}),
      })
      .commit(),
    tx.campaignPhone.create({ workspaceId, campaignId: campaign.campaignId, phone, batchContactId }).commit(),
    tx.batchContact
      .create({
        workspaceId,
        campaignId: campaign.campaignId,
        batchContactId,
        contactId: contact.contactId,
        phone,
        parameters,
        state,
        dueAt: DUE_NOW,
        attempt: 0,
        attempts: [],
        reason: state === 'skipped_dnc' ? dnc : undefined,
        shard,
        jobId: job.jobId,
        row: row.row,
        createdAt: now,
        updatedAt: now,
      })
      .commit(),
    tx.campaignCounters
      .update({ workspaceId, campaignId: campaign.campaignId, shard })
      .add({ total: 1, [counter]: 1 })
      .commit(),
  ]);
  if (!canceled) return;
  if (codes[0] === 'ConditionalCheckFailed') return; // decided by an earlier receive of this chunk
  if (codes[1] === 'ConditionalCheckFailed') {
    await recordRowOutcome({ ...record, outcome: 'merged', contactId: contact.contactId });
    return;
  }
  throw new Error(`upload row ${row.row}: transaction cancelled (${codes.join(', ')})`);
}

/** Rows of a bulk transaction: 3 items each (row outcome, phone key, batch contact) and ≤ 8 counter shards. */
const BULK_PACK_ROWS = 25;
/** Bulk transactions written at once. */
const BULK_TRANSACTIONS_AT_ONCE = 4;

/**
 * The bulk path (ImportPipeline.decideInBulk: rows that share no number with another row of the
 * file), for the common case of numbers new to the workspace:
 * 1. rows without a valid phone are rejected (their outcome records in batch writes: a rejection
 *    depends on the row alone);
 * 2. numbers no contact has (one batch read of their keys) get their contacts created several to a
 *    transaction (source CSV; a refused transaction's rows go one at a time);
 * 3. each row's outcome record, phone key and batch contact (`skipped_dnc` for a suppressed number:
 *    one batch read of the suppression list), with their counter shards summed, are written
 *    BULK_PACK_ROWS to a transaction on "does not exist" conditions.
 * Everything else goes one at a time through decideRow, which decides each case: a `contact_id`
 * row, a number some contact has (a link), a number already in the campaign (merged), a row decided
 * by another receive of the chunk, a transaction refused. A crash between 2 and 3 leaves contacts
 * without their rows decided: the chunk's next receive finds them and links them (decideRow).
 */
async function decideInBulk(
  ctx: Context,
  job: ContactImport,
  rows: ParsedRow[],
  step: (rows: number) => void,
): Promise<ParsedRow[]> {
  const { campaign } = ctx;
  const workspaceId = job.workspaceId;
  const leftOver: ParsedRow[] = [];
  const rejected: Parameters<typeof ContactImportRowEntity.put>[0] = [];
  const valid: { row: ParsedRow; phone: string; parameters: Record<string, string>; input: ContactInput }[] =
    [];
  for (const row of rows) {
    const f = row.fields;
    if (f.contact_id || !f.phone) {
      leftOver.push(row);
      continue;
    }
    const phone = toE164InCountry(f.phone, job.country);
    const base = rowRecordBase(job, row);
    const unfit = rowParameterProblem(row);
    if (unfit) {
      rejected.push({ ...base, outcome: 'rejected', reason: unfit });
      continue;
    }
    if (!phone) {
      rejected.push({
        ...base,
        outcome: 'rejected',
        reason: `phone "${clip(f.phone, 40)}" is not a valid phone number`,
      });
      continue;
    }
    const input: ContactInput = { phone, first_name: f.first_name, last_name: f.last_name, source: 'csv' };
    if (!validateContactInput(input, job.country).ok) {
      leftOver.push(row);
      continue;
    }
    // Without a contact yet, the row alone gives the parameters; one that a contact would complete
    // is decided once its contact is known (decideRow).
    valid.push({ row, phone, parameters: parametersOf(row, null, ctx.parameters), input });
  }
  if (rejected.length > 0) {
    const { unprocessed } = await ContactImportRowEntity.put(rejected).go({ concurrency: 2 });
    if (unprocessed.length > 0) throw new Error('the table is busy: the chunk is tried again');
    step(rejected.length);
  }
  const fresh = await newAmong(
    workspaceId,
    valid.map((v) => v.input),
    job.country,
  );
  const creatable: (typeof valid)[number][] = [];
  valid.forEach((v, i) => {
    if (!fresh[i]) leftOver.push(v.row);
    else creatable.push(v);
  });
  const suppressed = await suppressedAmong(
    campaign.organisationId,
    creatable.map((v) => v.phone),
  );
  const packs: (typeof creatable)[] = [];
  for (let i = 0; i < creatable.length; i += BULK_PACK_ROWS)
    packs.push(creatable.slice(i, i + BULK_PACK_ROWS));
  // Each pack counts its rows on one counter shard (its batch contacts carry it), a different one
  // for packs written at once, so that their transactions do not conflict on the counters.
  const firstShard = Math.floor(Math.random() * COUNTER_SHARDS);
  await inParallel(packs, BULK_TRANSACTIONS_AT_ONCE, async (pack, index) => {
    const contactIds = new Map<ParsedRow, string>();
    const refused = new Set(
      (
        await createContactsTogether(
          workspaceId,
          pack.map((v) => ({
            input: v.input,
            alsoWrite: (_tx, contactId) => {
              contactIds.set(v.row, contactId);
              return [];
            },
          })),
          { country: job.country },
        )
      ).map((draft) => draft.input),
    );
    const created = pack.filter((v) => !refused.has(v.input));
    leftOver.push(...pack.filter((v) => refused.has(v.input)).map((v) => v.row));
    if (created.length === 0) return;
    const written = await addBatchContacts(
      ctx,
      job,
      (firstShard + index) % COUNTER_SHARDS,
      created.map((v) => ({
        row: v.row,
        phone: v.phone,
        contactId: contactIds.get(v.row)!,
        parameters: v.parameters,
        missing: ctx.parameters.filter((name) => !v.parameters[name]),
        dnc: suppressed.has(v.phone) ? 'suppressed' : undefined,
      })),
    );
    if (written) step(created.length);
    else leftOver.push(...created.map((v) => v.row));
  });
  return leftOver;
}

interface NewBatchContact {
  row: ParsedRow;
  phone: string;
  contactId: string;
  parameters: Record<string, string>;
  /** The agent's `{{parameters}}` the row does not give (left empty). */
  missing: string[];
  dnc?: string;
}

/** Rows' outcome records, phone keys and batch contacts in one transaction; false when a condition refused it. */
async function addBatchContacts(
  ctx: Context,
  job: ContactImport,
  shard: number,
  entries: NewBatchContact[],
): Promise<boolean> {
  const { campaign } = ctx;
  const workspaceId = job.workspaceId;
  const now = clock.now().toISOString();
  const counts = new Map<number, Partial<Record<keyof Progress, number>>>();
  const items = entries.map((entry) => {
    const batchContactId = newId('batchContact');
    const state = stateFor(campaign, entry.dnc);
    const counter = counterFor(state);
    const add = counts.get(shard) ?? {};
    add.total = (add.total ?? 0) + 1;
    add[counter] = (add[counter] ?? 0) + 1;
    counts.set(shard, add);
    return { entry, batchContactId, state };
  });
  const { canceled } = await transact((tx) => [
    ...items.flatMap(({ entry, batchContactId, state }) => [
      tx.contactImportRow
        .create({
          ...rowRecordBase(job, entry.row),
          outcome: 'created',
          contactId: entry.contactId,
          ...(entry.missing.length > 0 ? { missingParameters: entry.missing } : {}),
        })
        .commit(),
      tx.campaignPhone
        .create({ workspaceId, campaignId: campaign.campaignId, phone: entry.phone, batchContactId })
        .commit(),
      tx.batchContact
        .create({
          workspaceId,
          campaignId: campaign.campaignId,
          batchContactId,
          contactId: entry.contactId,
          phone: entry.phone,
          parameters: entry.parameters,
          state,
          dueAt: DUE_NOW,
          attempt: 0,
          attempts: [],
          reason: state === 'skipped_dnc' ? entry.dnc : undefined,
          shard,
          jobId: job.jobId,
          row: entry.row.row,
          createdAt: now,
          updatedAt: now,
        })
        .commit(),
    ]),
    ...[...counts].map(([shard, add]) =>
      tx.campaignCounters.update({ workspaceId, campaignId: campaign.campaignId, shard }).add(add).commit(),
    ),
  ]);
  return !canceled;
}

const stateFor = (campaign: Campaign, dnc: string | undefined) =>
  campaign.status === 'cancelled'
    ? ('cancelled' as const)
    : dnc
      ? ('skipped_dnc' as const)
      : ('pending' as const);

const counterFor = (state: 'pending' | 'cancelled' | 'skipped_dnc'): keyof Progress =>
  state === 'pending' ? 'pending' : state === 'cancelled' ? 'cancelled' : 'skipped';

/** An upload job on the wire (the contact import's view, with its campaign and kind). */
export async function uploadJobView(job: ContactImport, withErrors: boolean) {
  const issues = withErrors ? await importIssues(job) : undefined;
  const view = importView(job, issues?.errors);
  return {
    id: view.id,
    job_id: view.job_id,
    campaign_id: job.campaignId ?? '',
    kind: 'upload' as const,
    file_name: view.file_name,
    status: view.status,
    progress: view.progress,
    counts: view.counts,
    ...(view.errors ? { errors: view.errors } : {}),
    ...(issues ? { warnings: issues.parameters } : {}),
    failure_reason: view.failure_reason,
    created_at: view.created_at,
    completed_at: view.completed_at,
  };
}

/**
 * The `{{parameters}}` of the agent's prompt that rows of the campaign's uploads lacked (left empty):
 * per upload job, newest first, each parameter with its first rows and how many (one query for the
 * jobs, one per job that has any).
 */
export async function campaignWarnings(
  campaign: Pick<Campaign, 'workspaceId' | 'campaignId'>,
): Promise<{ job_id: string; parameter: string; rows: number[]; count: number }[]> {
  const { items } = await listImports(
    campaign.workspaceId,
    { limit: 100 },
    { campaignId: campaign.campaignId },
  );
  const perJob = await Promise.all(
    items
      .filter((job) => (job.warned ?? 0) > 0)
      .map(async (job) =>
        (await importIssues(job)).parameters.map((warning) => ({ job_id: job.jobId, ...warning })),
      ),
  );
  return perJob.flat();
}

/** The run job: the campaign's calls from its start (`processing` while running or paused). */
export function runJobView(campaign: Campaign, progress: Progress) {
  const total = progress.total;
  const left = progress.pending + progress.calling + progress.retryScheduled;
  return {
    id: campaign.runJobId!,
    job_id: campaign.runJobId!,
    campaign_id: campaign.campaignId,
    kind: 'run' as const,
    file_name: null,
    status:
      campaign.status === 'completed'
        ? ('completed' as const)
        : campaign.status === 'cancelled'
          ? ('failed' as const)
          : ('processing' as const),
    progress: { done: total - left, total },
    counts: { total, created: progress.completed, merged: progress.skipped, rejected: progress.failed },
    failure_reason: campaign.status === 'cancelled' ? 'cancelled' : null,
    created_at: campaign.startedAt ?? campaign.createdAt,
    completed_at: campaign.completedAt ?? null,
  };
}
