import { isUtf8 } from 'node:buffer';
import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { clock } from '../platform/clock.js';
import { HttpError, notFound, ValidationError } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { BUCKET } from '../platform/resources.js';
import { objectSize, putObject, signedUploadUrl } from '../platform/storage.js';
import { isConditionFailure } from '../platform/table.js';
import { contactImportPipeline } from './contact-import-rows.js';
import { ContactImportChunkEntity, ContactImportEntity, type ContactImport } from './entities.js';
import type { ImportFormat } from './import-parse.js';
import {
  MAX_ERRORS,
  type ImportPipeline,
  type ParameterWarning,
  type RowWarning,
} from './import-pipeline.js';
import { onePage, type Page } from './paging.js';

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
 *
 * Here: the jobs (made, started, failed, listed, their issues and their wire view). The steps are in
 * import-worker.ts, what a pipeline provides in import-pipeline.ts, contact imports' rows in
 * contact-import-rows.ts.
 */

export const MAX_DIRECT_BYTES = 5 * 1024 * 1024;
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
export const UPLOAD_URL_SECONDS = 3600;
const IMPORT_NOT_FOUND = 'Import not found';
const REPLACEMENT_CHARACTER = Buffer.from('\uFFFD', 'utf8');

const objectKeyOf = (workspaceId: string, jobId: string) =>
  `${BUCKET.uploadsPrefix}imports/${workspaceId}/${jobId}`;

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
  if (input.bytes.includes(REPLACEMENT_CHARACTER) || !isUtf8(input.bytes)) {
    // API Gateway hands text/* bodies over decoded as UTF-8: invalid bytes arrive as U+FFFD (or, as
    // the local gateway hands a text body that is not UTF-8, base64-encoded with its bytes intact).
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

/** The job `failed` with `reason`, unless it moved on meanwhile (or was planned already). */
export async function failJob(
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
