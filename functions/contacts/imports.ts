import { createHash } from 'node:crypto';
import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { clock } from '../platform/clock.js';
import { HttpError, notFound, ValidationError } from '../platform/errors.js';
import { ID_PREFIXES, isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { toE164InCountry } from '../platform/phone.js';
import { sendMessage, sendMessages } from '../platform/queue.js';
import { BUCKET } from '../platform/resources.js';
import { getObject, objectSize, putObject, signedUploadUrl } from '../platform/storage.js';
import {
  ContactImportChunkEntity,
  ContactImportEntity,
  ContactImportRowEntity,
  contactsService,
  type ContactImport,
  type ContactImportRow,
} from './entities.js';
import type { ImportFormat, ParseOptions, ParsedRow, RowFields } from './import-parse.js';
import { onePage, type Page } from './paging.js';
import type { ContactInput } from './schemas.js';
import { inParallel } from '../platform/parallel.js';
import { createImportedContacts } from './bulk-creation.js';
import { mergeContact } from './creation.js';
import { checkContactInput, type NewContactFields } from './input.js';
import { normaliseEmail } from './lookup.js';

/**
 * Contact imports: a CSV or vCard file becomes contacts, merged with those already there.
 *
 * The job: `POST …/contacts/imports` with `{format}` makes a `pending` job and a presigned PUT URL
 * (`uploads/imports/<ws>/<job>`, one hour, files up to 50 MB); the client uploads the file there and
 * calls `POST …/contacts/imports/{job_id}/start` (there are no S3 event notifications locally, and an
 * explicit start never leaves a worker waiting for an upload that does not come). A `text/csv` or
 * `text/vcard` body of at most 5 MB posted to `…/contacts/imports` is stored and started at once.
 * Started, the job is `processing` until `completed` or `failed`.
 *
 * The work, on the `imports` queue, each step its own message and each safe to receive twice:
 * - plan: reads the file (ImportFileError → the job `failed` with the reason, nothing counted), cuts
 *   the rows into chunks of CHUNK_ROWS written to the bucket as JSON, sets `total` and `chunks` once
 *   (conditioned on their absence), and sends one chunk message per chunk not done yet.
 * - chunk: each row not decided yet is decided once: rejected (neither a valid phone number nor a valid
 *   email address, or another field invalid: its reason), or merged into the contact with its phone
 *   number (else email) or created (`mergeContact`: only empty fields filled). Its outcome record is
 *   created with "does not exist" in the same transaction as the contact it writes, or alone when the
 *   contact did not change. Then the chunk's counts are summed from its rows' outcome records and added
 *   to the job in one transaction with the chunk's record (also "does not exist"). A redelivered chunk,
 *   or one that crashed half-way, never counts a row twice: created + merged + rejected = total exactly.
 * - the chunk that completes the last one sets the job `completed` (conditioned on every chunk counted).
 *
 * `progress` is `{done, total}`: the rows counted (chunk by chunk) of the file's rows. Failures: an empty file,
 * a CSV without a phone or email column, an unreadable CSV or vCard, no data rows, a file over 50 MB:
 * all are found by the plan, before anything is counted, so a failed job has no counts.
 */

const REPLACEMENT_CHARACTER = Buffer.from('\uFFFD', 'utf8');
export const MAX_DIRECT_BYTES = 5 * 1024 * 1024;
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
export const UPLOAD_URL_SECONDS = 3600;
/** Rows a chunk message imports. */
export const CHUNK_ROWS = 250;
/** Rows of a chunk imported at once. */
const ROW_CONCURRENCY = 25;
/** The job shows the first rejected rows. */
export const MAX_ERRORS = 100;
const ROW_RECORD_DAYS = 30;

const SOURCE = { csv: 'csv', vcf: 'vcf' } as const;
const IMPORT_NOT_FOUND = 'Import not found';

const objectKeyOf = (workspaceId: string, jobId: string) =>
  `${BUCKET.uploadsPrefix}imports/${workspaceId}/${jobId}`;
const chunkKeyOf = (job: Pick<ContactImport, 'objectKey'>, chunk: number) =>
  `${job.objectKey}.chunks/${pad(chunk, 6)}.json`;
const pad = (n: number, width: number) => String(n).padStart(width, '0');

// ── Pipelines ────────────────────────────────────────────────────────────────────────────────────────

/** What a row's outcome record is written with (the key of the row and its expiry). */
export interface RowRecordBase {
  workspaceId: string;
  jobId: string;
  row: string;
  expiresAt: number;
}

/**
 * What the job machinery (jobs, plan, chunks, counts, progress) does with an import's rows and where
 * its steps travel. Contact imports are the default; a campaign's uploads (functions/campaigns/) are
 * the same jobs (`campaignId` set) on the `campaigns` queue, each row becoming a batch contact.
 * `decideRow` must write the row's outcome record (`created`, `merged` or `rejected`) exactly once,
 * created with "does not exist" in the same transaction as what the row writes (`recordRowOutcome`
 * for a row that writes nothing else).
 */
export interface ImportPipeline {
  /** The campaign whose upload jobs these are (undefined: contact imports). */
  campaignId?: string;
  sendPlan(job: ContactImport): Promise<void>;
  sendChunks(job: ContactImport, chunks: number[]): Promise<void>;
  decideRow?(job: ContactImport, row: ParsedRow, record: RowRecordBase): Promise<void>;
  /**
   * Decides, in bulk, rows that share no phone number or email address with another row of the file
   * (calling `step` with each batch's size once it is written), and returns those left to `decideRow`.
   * Without it every row goes through `decideRow`.
   */
  decideInBulk?(job: ContactImport, rows: ParsedRow[], step: (rows: number) => void): Promise<ParsedRow[]>;
  /**
   * Decides every row of a chunk and counts them, with no record per row: its outcomes must follow
   * from what is stored, so that a receive after a crash, or a second receive, counts each row as
   * the first would have (see importContactRows). When given, `decideRow` and `decideInBulk` are
   * not used and the chunk writes no row outcome records.
   */
  importRows?(job: ContactImport, groups: ParsedRow[][], step: (rows: number) => void): Promise<ChunkTally>;
  parse?: ParseOptions;
}

/** A chunk's counts, and its rejected rows (the first MAX_ERRORS, by row number). */
export interface ChunkTally {
  created: number;
  merged: number;
  rejected: number;
  errors: { row: number; reason: string }[];
  /** Rows taken with a warning: how many, the first MAX_ERRORS (by row number) and why. */
  warned?: number;
  warnings?: { row: number; reason: string }[];
  /** A campaign upload's rows taken without a `{{parameter}}` of the agent's prompt, by name. */
  missingParameters?: Record<string, number[]>;
}

/** A row's warning, or a parameter missing from rows, as the job shows them. */
export type RowWarning = { row: number; reason: string };
export type ParameterWarning = { parameter: string; rows: number[]; count: number };

export const contactImportPipeline: ImportPipeline = {
  sendPlan: (job) =>
    sendMessage('imports', {
      type: 'contacts.import.plan',
      workspace_id: job.workspaceId,
      job_id: job.jobId,
    }),
  sendChunks: (job, chunks) =>
    sendMessages(
      'imports',
      chunks.map((chunk) => ({
        type: 'contacts.import.chunk' as const,
        workspace_id: job.workspaceId,
        job_id: job.jobId,
        chunk,
      })),
    ),
  importRows: (job, groups, step) => importContactRows(job, groups, step),
};

// ── Jobs ─────────────────────────────────────────────────────────────────────────────────────────────

/** The job, when it belongs to the pipeline (a contact import, or one campaign's upload). */
export async function getImport(
  workspaceId: string,
  jobId: string,
  pipeline: Pick<ImportPipeline, 'campaignId'> = contactImportPipeline,
): Promise<ContactImport | null> {
  if (!isId('job', jobId)) return null;
  const { data } = await ContactImportEntity.get({ workspaceId, jobId }).go({ consistent: true });
  if (!data || data.campaignId !== pipeline.campaignId) return null;
  return data;
}

export async function requireImport(
  workspaceId: string,
  jobId: string,
  pipeline: Pick<ImportPipeline, 'campaignId'> = contactImportPipeline,
): Promise<ContactImport> {
  const job = await getImport(workspaceId, jobId, pipeline);
  if (!job) throw notFound(IMPORT_NOT_FOUND);
  return job;
}

async function newJob(
  workspaceId: string,
  input: { format: ImportFormat; fileName?: string; country: string; createdBy: string },
  status: 'pending' | 'processing',
  pipeline: ImportPipeline,
): Promise<ContactImport> {
  const jobId = newId('job');
  const now = clock.now().toISOString();
  const { data } = await ContactImportEntity.create({
    workspaceId,
    jobId,
    format: input.format,
    fileName: input.fileName,
    status,
    objectKey: objectKeyOf(workspaceId, jobId),
    country: input.country,
    createdBy: input.createdBy,
    campaignId: pipeline.campaignId,
    createdAt: now,
    updatedAt: now,
  }).go();
  return data as ContactImport;
}

/** A pending job and the URL to PUT its file to. */
export async function createUploadImport(
  workspaceId: string,
  input: { format: ImportFormat; fileName?: string; country: string; createdBy: string },
  pipeline: ImportPipeline = contactImportPipeline,
): Promise<{ job: ContactImport; uploadUrl: string }> {
  const job = await newJob(workspaceId, input, 'pending', pipeline);
  return { job, uploadUrl: await signedUploadUrl(job.objectKey, UPLOAD_URL_SECONDS) };
}

/** A file sent as the request's body (at most 5 MB): stored, and the job started at once. */
export async function createDirectImport(
  workspaceId: string,
  input: { format: ImportFormat; fileName?: string; country: string; createdBy: string; bytes: Buffer },
  pipeline: ImportPipeline = contactImportPipeline,
): Promise<ContactImport> {
  if (input.bytes.includes(REPLACEMENT_CHARACTER)) {
    // API Gateway hands text/* bodies over decoded as UTF-8: invalid bytes arrive as U+FFFD.
    throw new ValidationError([
      {
        type: 'value_error',
        loc: ['body'],
        msg:
          'Value error, the file is not UTF-8 (Latin-1 or Windows-1252?): save it as UTF-8, or upload it to ' +
          'upload_url (POST {format}), which reads Latin-1 files as they are',
        input: null,
      },
    ]);
  }
  if (input.bytes.byteLength > MAX_DIRECT_BYTES) {
    throw new HttpError(
      413,
      'A file sent as the body is at most 5 MB: upload larger files through upload_url',
    );
  }
  const job = await newJob(workspaceId, input, 'processing', pipeline);
  await putObject(job.objectKey, input.bytes, input.format === 'csv' ? 'text/csv' : 'text/vcard');
  await pipeline.sendPlan(job);
  return job;
}

/**
 * Starts a pending job whose file was uploaded: 409 when it is not there yet, 413 (and the job
 * failed) when it is over 50 MB. A job started already is answered as it is (its plan sent again
 * while it is not planned, in case the first send was lost).
 */
export async function startImport(
  workspaceId: string,
  jobId: string,
  pipeline: ImportPipeline = contactImportPipeline,
): Promise<ContactImport> {
  const job = await requireImport(workspaceId, jobId, pipeline);
  if (job.status === 'processing' && job.chunks === undefined) await pipeline.sendPlan(job);
  if (job.status !== 'pending') return job;
  const size = await objectSize(job.objectKey);
  if (size === undefined)
    throw new HttpError(409, 'The file has not been uploaded yet: PUT it to upload_url first');
  if (size > MAX_UPLOAD_BYTES) {
    await failJob(job, 'the file is larger than 50 MB', ['pending']);
    throw new HttpError(413, 'The file is larger than 50 MB');
  }
  try {
    await ContactImportEntity.patch({ workspaceId, jobId })
      .set({ status: 'processing', updatedAt: clock.now().toISOString() })
      .where((attr, op) => op.eq(attr.status, 'pending'))
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return requireImport(workspaceId, jobId, pipeline); // started meanwhile
  }
  await pipeline.sendPlan(job);
  return requireImport(workspaceId, jobId, pipeline);
}

async function failJob(
  job: ContactImport,
  reason: string,
  from: ('pending' | 'processing')[] = ['processing'],
): Promise<void> {
  const now = clock.now().toISOString();
  try {
    await ContactImportEntity.patch({ workspaceId: job.workspaceId, jobId: job.jobId })
      .set({ status: 'failed', failureReason: reason, updatedAt: now, completedAt: now })
      .where((attr, op) =>
        [
          `(${from.map((status: ContactImport['status']) => op.eq(attr.status, status)).join(' OR ')})`,
          op.notExists(attr.chunks),
        ].join(' AND '),
      )
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

function isConditionFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth += 1) {
    const { name, message, cause } = current as { name?: string; message?: string; cause?: unknown };
    if (name === 'ConditionalCheckFailedException' || /conditional request failed/i.test(message ?? ''))
      return true;
    current = cause;
  }
  return false;
}

const importConversions = onFirstUse(() => createConversions(ContactImportEntity));

/** The workspace's imports (a campaign's uploads: that campaign's), newest first. */
export async function listImports(
  workspaceId: string,
  query: { limit: number; cursor?: string },
  pipeline: Pick<ImportPipeline, 'campaignId'> = contactImportPipeline,
): Promise<Page<ContactImport>> {
  const { campaignId } = pipeline;
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    order: 'desc',
    run: (options) =>
      ContactImportEntity.query
        .byId({ workspaceId })
        .where((attr, op) =>
          campaignId === undefined ? op.notExists(attr.campaignId) : op.eq(attr.campaignId, campaignId),
        )
        .go(options),
    cursorAfter: (job) =>
      importConversions().byAccessPattern.byId.fromComposite.toCursor({ workspaceId, jobId: job.jobId }),
  });
}

/** The first MAX_ERRORS rejected rows of a job, by row number (from its chunks' records). */
export async function importErrors(job: ContactImport): Promise<{ row: number; reason: string }[]> {
  return (await importIssues(job)).errors;
}

/**
 * What a job's chunks recorded: its first MAX_ERRORS rejected rows and rows taken with a warning, by
 * row number, and the `{{parameters}}` a campaign upload's rows lacked (each with its first
 * MAX_ERRORS rows and how many). One query, none when the job has neither.
 */
export async function importIssues(
  job: ContactImport,
): Promise<{ errors: RowWarning[]; warnings: RowWarning[]; parameters: ParameterWarning[] }> {
  if (!job.rejected && !job.warned) return { errors: [], warnings: [], parameters: [] };
  const { data } = await ContactImportChunkEntity.query
    .byJob({ workspaceId: job.workspaceId })
    .begins({ jobId: job.jobId })
    .go({ pages: 'all' });
  const firstRows = (rows: RowWarning[]) => rows.sort((a, b) => a.row - b.row).slice(0, MAX_ERRORS);
  const missing = new Map<string, number[]>();
  for (const chunk of data)
    for (const [name, rows] of Object.entries((chunk.missingParameters ?? {}) as Record<string, number[]>))
      missing.set(name, [...(missing.get(name) ?? []), ...rows]);
  return {
    errors: firstRows(data.flatMap((chunk) => (chunk.errors ?? []) as RowWarning[])),
    warnings: firstRows(data.flatMap((chunk) => (chunk.warnings ?? []) as RowWarning[])),
    parameters: [...missing]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([parameter, rows]) => ({
        parameter,
        rows: rows.sort((a, b) => a - b).slice(0, MAX_ERRORS),
        count: rows.length,
      })),
  };
}

// ── The worker ───────────────────────────────────────────────────────────────────────────────────────

/** A chunk: groups of rows that share a phone number or an email address, each in file order. */
interface ChunkFile {
  groups: ParsedRow[][];
}

/**
 * The rows in groups: two rows that share a phone number (as read in `country`) or an email address
 * are in one group (transitively), in file order. A group is imported one row after another, so
 * duplicates within a file merge in file order (the first creates, the next fill its empty fields),
 * whatever the chunks' timing; different groups run in parallel.
 */
function groupsOf(rows: ParsedRow[], country: string): ParsedRow[][] {
  const parent = rows.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  const owner = new Map<string, number>();
  rows.forEach(({ fields }, i) => {
    const phone = fields.phone ? toE164InCountry(fields.phone, country) : undefined;
    const email = normaliseEmail(fields.email);
    for (const key of [phone && `p:${phone}`, email && `e:${email}`]) {
      if (!key) continue;
      const seen = owner.get(key);
      if (seen === undefined) owner.set(key, i);
      else parent[find(i)] = find(seen);
    }
  });
  const groups = new Map<number, ParsedRow[]>();
  rows.forEach((row, i) => {
    const root = find(i);
    const group = groups.get(root) ?? [];
    group.push(row);
    groups.set(root, group);
  });
  return [...groups.values()];
}

/** Groups packed into chunks of about CHUNK_ROWS rows (a group is never split). */
function chunksOf(groups: ParsedRow[][]): ParsedRow[][][] {
  const chunks: ParsedRow[][][] = [];
  let current: ParsedRow[][] = [];
  let size = 0;
  for (const group of groups) {
    if (size > 0 && size + group.length > CHUNK_ROWS) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(group);
    size += group.length;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The plan step (see above). Returns what it did, for the log. */
export async function planImport(
  workspaceId: string,
  jobId: string,
  options: { send?: boolean } = {},
  pipeline: ImportPipeline = contactImportPipeline,
): Promise<string> {
  const job = await getImport(workspaceId, jobId, pipeline);
  if (!job || job.status !== 'processing') return 'not processing';
  if (job.chunks === undefined) {
    const bytes = await getObject(job.objectKey);
    if (!bytes) {
      await failJob(job, 'the uploaded file is gone');
      return 'failed: no file';
    }
    let rows: ParsedRow[];
    // The parsers (csv-parse, ical.js) are loaded by the plan step alone, not by every function that
    // imports this module (campaign uploads, the contacts API, workers reading imports).
    const { ImportFileError, parseImportFile } = await import('./import-parse.js');
    try {
      ({ rows } = await parseImportFile(bytes, job.format, pipeline.parse));
      if (rows.length === 0) throw new ImportFileError('the file has no data rows');
    } catch (error) {
      if (!(error instanceof ImportFileError)) throw error;
      await failJob(job, error.message);
      return `failed: ${error.message}`;
    }
    const pieces = chunksOf(groupsOf(rows, job.country));
    const chunks = pieces.length;
    await inParallel(
      pieces.map((groups, i) => ({ groups, i })),
      8,
      ({ groups, i }) =>
        putObject(chunkKeyOf(job, i), JSON.stringify({ groups } satisfies ChunkFile), 'application/json'),
    );
    try {
      await ContactImportEntity.patch({ workspaceId, jobId })
        .set({ total: rows.length, chunks, updatedAt: clock.now().toISOString() })
        .where((attr, op) => `${op.eq(attr.status, 'processing')} AND ${op.notExists(attr.chunks)}`)
        .go();
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  const planned = await requireImport(workspaceId, jobId, pipeline);
  if (planned.status !== 'processing' || planned.chunks === undefined) return 'not processing';
  const done = await doneChunks(planned);
  const pending = Array.from({ length: planned.chunks }, (_, i) => i).filter((i) => !done.has(i));
  if (options.send === false) return `planned ${planned.total} rows in ${planned.chunks} chunks (none sent)`;
  await pipeline.sendChunks(planned, pending);
  return `planned ${planned.total} rows in ${planned.chunks} chunks (${pending.length} sent)`;
}

async function doneChunks(job: ContactImport): Promise<Set<number>> {
  const { data } = await ContactImportChunkEntity.query
    .byJob({ workspaceId: job.workspaceId })
    .begins({ jobId: job.jobId })
    .go({ pages: 'all', attributes: ['chunk'] });
  return new Set(data.map((c) => Number(c.chunk)));
}

/** Test hooks: fail after this many rows of the chunk were imported (a crash half-way). */
export interface ChunkHooks {
  failAfterRows?: number;
}

/** The chunk step (see above). */
export async function processChunk(
  workspaceId: string,
  jobId: string,
  chunk: number,
  hooks: ChunkHooks = {},
  pipeline: ImportPipeline = contactImportPipeline,
): Promise<string> {
  const job = await getImport(workspaceId, jobId, pipeline);
  if (!job || job.status !== 'processing' || job.chunks === undefined) return 'not processing';
  const chunkKey = { workspaceId, jobId, chunk: pad(chunk, 6) };
  const { data: counted } = await ContactImportChunkEntity.get(chunkKey).go({ consistent: true });
  if (!counted) {
    const file = await getObject(chunkKeyOf(job, chunk));
    if (!file) throw new Error(`chunk ${chunk} of import ${jobId} is missing`);
    const { groups } = JSON.parse(Buffer.from(file).toString('utf8')) as ChunkFile;
    let imported = 0;
    const step = (count: number) => {
      imported += count;
      if (hooks.failAfterRows !== undefined && imported >= hooks.failAfterRows)
        throw new Error('test hook: the chunk fails half-way');
    };
    const tally = pipeline.importRows
      ? await pipeline.importRows(job, groups, step)
      : await decideRowByRow(job, chunk, groups, step, pipeline);
    const now = clock.now().toISOString();
    const result = await contactsService.transaction
      .write((tx) => [
        tx.contactImportChunk
          .create({
            ...chunkKey,
            created: tally.created,
            merged: tally.merged,
            rejected: tally.rejected,
            errors: tally.errors,
            ...(tally.warnings?.length ? { warnings: tally.warnings } : {}),
            ...(tally.missingParameters && Object.keys(tally.missingParameters).length > 0
              ? { missingParameters: tally.missingParameters }
              : {}),
          })
          .commit(),
        tx.contactImport
          .patch({ workspaceId, jobId })
          .add({
            created: tally.created,
            merged: tally.merged,
            rejected: tally.rejected,
            warned: tally.warned ?? 0,
            chunksDone: 1,
          })
          .set({ updatedAt: now })
          .where((attr, op) => op.eq(attr.status, 'processing'))
          .commit(),
      ])
      .go();
    if (result.canceled) logger.info('import chunk counted already', { jobId, chunk });
  }
  await completeIfDone(workspaceId, jobId, pipeline);
  return `chunk ${chunk} counted`;
}

/**
 * A chunk decided row by row (`decideRow`, and `decideInBulk` for the rows alone in their group),
 * each row's outcome a record created once; the counts summed from those records.
 */
async function decideRowByRow(
  job: ContactImport,
  chunk: number,
  groups: ParsedRow[][],
  step: (rows: number) => void,
  pipeline: ImportPipeline,
): Promise<ChunkTally> {
  const rows = groups.flat();
  const decided = new Set((await rowOutcomes(job, rows)).map((r) => Number(r.row)));
  let oneByOne = groups;
  if (pipeline.decideInBulk) {
    const [alone, together] = partition(groups, (group) => group.length === 1);
    const open = alone.flat().filter((row) => !decided.has(row.row));
    const leftOver = await pipeline.decideInBulk(job, open, step);
    oneByOne = [...together, ...leftOver.map((row) => [row])];
  }
  await inParallel(oneByOne, ROW_CONCURRENCY, async (group) => {
    for (const row of group) {
      if (decided.has(row.row)) continue;
      if (!pipeline.decideRow) throw new Error('the import pipeline decides no rows');
      await pipeline.decideRow(job, row, rowRecordBase(job, row));
      step(1);
    }
  });
  const outcomes = (await rowOutcomes(job, rows)).sort((a, b) => Number(a.row) - Number(b.row));
  if (outcomes.length !== rows.length) {
    throw new Error(
      `chunk ${chunk} of import ${job.jobId}: ${outcomes.length} of ${rows.length} rows decided`,
    );
  }
  const count = (outcome: ContactImportRow['outcome']) =>
    outcomes.filter((r) => r.outcome === outcome).length;
  const errors = outcomes
    .filter((r) => r.outcome === 'rejected')
    .slice(0, MAX_ERRORS)
    .map((r) => ({ row: Number(r.row), reason: r.reason ?? 'rejected' }));
  const missingParameters: Record<string, number[]> = {};
  let warned = 0;
  for (const r of outcomes) {
    if (!r.missingParameters?.length) continue;
    warned += 1;
    for (const name of r.missingParameters) (missingParameters[name] ??= []).push(Number(r.row));
  }
  return {
    created: count('created'),
    merged: count('merged'),
    rejected: count('rejected'),
    errors,
    warned,
    missingParameters,
  };
}

async function completeIfDone(workspaceId: string, jobId: string, pipeline: ImportPipeline): Promise<void> {
  const job = await requireImport(workspaceId, jobId, pipeline);
  if (job.status !== 'processing' || job.chunks === undefined || job.chunksDone < job.chunks) return;
  const now = clock.now().toISOString();
  try {
    await ContactImportEntity.patch({ workspaceId, jobId })
      .set({ status: 'completed', updatedAt: now, completedAt: now })
      .where((attr, op) => `${op.eq(attr.status, 'processing')} AND ${op.eq(attr.chunksDone, job.chunks!)}`)
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** The outcome records of these rows (those decided), read consistently. */
async function rowOutcomes(job: ContactImport, rows: ParsedRow[]): Promise<ContactImportRow[]> {
  const keys = rows.map((r) => ({ workspaceId: job.workspaceId, jobId: job.jobId, row: pad(r.row, 8) }));
  const found: ContactImportRow[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    const { data, unprocessed } = await ContactImportRowEntity.get(keys.slice(i, i + 100)).go({
      consistent: true,
      concurrency: 1,
    });
    if (unprocessed.length > 0) throw new Error('the table is busy: the chunk is tried again');
    found.push(...data);
  }
  return found;
}

export const rowRecordBase = (job: ContactImport, row: ParsedRow): RowRecordBase => ({
  workspaceId: job.workspaceId,
  jobId: job.jobId,
  row: pad(row.row, 8),
  expiresAt: Math.floor(clock.now().getTime() / 1000) + ROW_RECORD_DAYS * 86_400,
});

/** Rows of a chunk merged one at a time, at once. */
const ROWS_AT_ONCE = 25;

/**
 * A contact import's chunk, with no record per row (ImportPipeline.importRows). Each row's outcome
 * follows from the row and what is stored, so any receive counts it the same:
 * - rejected: decided by the row alone (its reason kept in the chunk's record, not per row);
 * - created: the row's contact has the id importedContactId(job, row) — the same on every receive —
 *   so a contact with that id, or a key that points at it, means this row created it (now or before);
 * - merged: its phone number (else email address) is another contact's, which gets the row's fields
 *   where it has none (doing so again changes nothing).
 * The first row of each group (rows that share a number or address are one group, in file order)
 * goes in bulk: one batch read of the keys, then the new contacts many to a transaction
 * (bulk-creation.ts: createImportedContacts). The rest — the group's next rows (merged into the first's
 * contact), rows that match a contact, rows of a refused transaction — one at a time with
 * mergeContact, in file order within a group, ROWS_AT_ONCE groups at once.
 */
async function importContactRows(
  job: ContactImport,
  groups: ParsedRow[][],
  step: (rows: number) => void,
): Promise<ChunkTally> {
  const tally: ChunkTally = { created: 0, merged: 0, rejected: 0, errors: [], warned: 0, warnings: [] };
  type Valid = { row: ParsedRow; input: ContactInput; fields: NewContactFields };
  // Each group's first valid row, created in bulk when nobody has its keys; the group's other rows
  // (which share a number or address with it) merge into it afterwards, in file order.
  const firsts: Valid[] = [];
  const rests: Valid[][] = [];
  const oneByOne: Valid[][] = [];
  for (const group of groups) {
    const valid: Valid[] = [];
    for (const row of group) {
      const decision = rowInput(row.fields, job.country, job.format);
      if ('reason' in decision) {
        tally.rejected += 1;
        tally.errors.push({ row: row.row, reason: decision.reason });
        continue;
      }
      valid.push({ row, input: decision.input, fields: decision.fields });
      if (decision.warnings.length > 0) {
        tally.warned! += 1;
        tally.warnings!.push({ row: row.row, reason: decision.warnings.join('; ') });
      }
    }
    if (valid.length > 0) {
      firsts.push(valid[0]);
      rests.push(valid.slice(1));
    }
  }
  step(tally.rejected);
  const outcomes = await createImportedContacts(
    job.workspaceId,
    firsts.map(({ row, fields }) => ({ contactId: importedContactId(job.jobId, row.row), fields })),
    { onWritten: step },
  );
  firsts.forEach((first, i) => {
    if (outcomes[i] === 'created') {
      tally.created += 1;
      if (rests[i].length > 0) oneByOne.push(rests[i]);
    } else oneByOne.push([first, ...rests[i]]);
  });
  await inParallel(oneByOne, ROWS_AT_ONCE, async (group) => {
    for (const { row, input } of group) {
      const { outcome } = await mergeContact(job.workspaceId, input, {
        country: job.country,
        contactId: importedContactId(job.jobId, row.row),
      });
      tally[outcome] += 1;
      step(1);
    }
  });
  tally.errors = tally.errors.sort((a, b) => a.row - b.row).slice(0, MAX_ERRORS);
  tally.warnings = tally.warnings!.sort((a, b) => a.row - b.row).slice(0, MAX_ERRORS);
  return tally;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const base32 = (value: bigint, length: number) => {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i += 1) {
    out = CROCKFORD[Number(rest & 31n)] + out;
    rest >>= 5n;
  }
  return out;
};

/**
 * The id of the contact an import's row creates: `ct_` and a ULID made of the job's time (the first
 * 10 characters of its ULID), 40 bits of a hash of the job id and the row number (40 bits). The same
 * on every receive of the row, different for every row of every job; sorted by row within a job.
 */
export function importedContactId(jobId: string, row: number): string {
  const time = jobId.slice(jobId.indexOf('_') + 1).slice(0, 10);
  const hash = BigInt(`0x${createHash('sha256').update(jobId).digest('hex').slice(0, 10)}`);
  return `${ID_PREFIXES.contact}_${time}${base32(hash, 8)}${base32(BigInt(row), 8)}`;
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

/** A row's outcome alone (a row that writes nothing else); a row decided already keeps its first outcome. */
export async function recordRowOutcome(
  record: Parameters<typeof ContactImportRowEntity.create>[0],
): Promise<void> {
  try {
    await ContactImportRowEntity.create(record).go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error; // decided already: the first decision stands
  }
}

/**
 * The contact a row makes, or why it is rejected. A phone number that is not valid in the job's
 * country, or an email address that is not valid, is dropped when the other one is valid — and the
 * row says so in its `warnings` (the job's per-row `warnings`: the contact was made without it); a
 * row with neither is rejected. Any other invalid field rejects the row with the validator's message.
 */
export function rowInput(
  fields: RowFields,
  country: string,
  format: ImportFormat,
): { input: ContactInput; fields: NewContactFields; warnings: string[] } | { reason: string } {
  const phone = fields.phone && toE164InCountry(fields.phone, country) ? fields.phone : undefined;
  const email = fields.email && normaliseEmail(fields.email) ? fields.email.trim() : undefined;
  if (!phone && !email) {
    const why = [
      fields.phone ? `phone "${fields.phone.slice(0, 40)}" is not a valid phone number` : 'no phone number',
      fields.email ? `email "${fields.email.slice(0, 60)}" is not a valid email address` : 'no email address',
    ];
    return { reason: `${why.join(' and ')}: a contact needs a phone number or an email address` };
  }
  const warnings = [
    ...(fields.phone && !phone
      ? [`phone "${fields.phone.slice(0, 40)}" is not a valid phone number: imported without a phone number`]
      : []),
    ...(fields.email && !email
      ? [
          `email "${fields.email.slice(0, 60)}" is not a valid email address: imported without an email address`,
        ]
      : []),
  ];
  const input = {
    first_name: fields.first_name,
    last_name: fields.last_name,
    phone,
    email,
    tags: fields.tags,
    attributes: fields.attributes,
    source: SOURCE[format],
  } as ContactInput;
  const checked = checkContactInput(input, country);
  if (!checked.ok) {
    const issue = checked.issues[0];
    const field = issue.loc.filter((part) => part !== 'body').join('.');
    return { reason: `${field ? `${field}: ` : ''}${issue.msg}` };
  }
  return { input, fields: checked.fields, warnings };
}

/** The job on the wire. `progress`: rows counted (`done`) of the file's rows (`total`, 0 until planned). */
export function importView(
  job: ContactImport,
  errors?: { row: number; reason: string }[],
  warnings?: { row: number; reason: string }[],
) {
  const failed = job.status === 'failed';
  const total = failed ? 0 : (job.total ?? 0);
  const progress = { done: Math.min(job.created + job.merged + job.rejected, total), total };
  return {
    id: job.jobId,
    job_id: job.jobId,
    workspace_id: job.workspaceId,
    format: job.format,
    file_name: job.fileName ?? null,
    status: job.status,
    progress,
    counts: {
      total,
      created: job.created,
      merged: job.merged,
      rejected: job.rejected,
    },
    ...(errors ? { errors } : {}),
    ...(warnings ? { warnings } : {}),
    failure_reason: job.failureReason ?? null,
    created_at: job.createdAt,
    completed_at: job.completedAt ?? null,
  };
}
