import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { inParallel } from '../platform/parallel.js';
import { toE164InCountry } from '../platform/phone.js';
import { getObject, putObject } from '../platform/storage.js';
import { isConditionFailure } from '../platform/table.js';
import {
  ContactImportChunkEntity,
  ContactImportEntity,
  ContactImportRowEntity,
  contactsService,
  type ContactImport,
  type ContactImportRow,
} from './entities.js';
import type { ParsedRow } from './import-parse.js';
import { MAX_ERRORS, pad, rowRecordBase, type ChunkTally, type ImportPipeline } from './import-pipeline.js';
import { failJob, getImport, requireImport } from './imports.js';
import { contactImportPipeline } from './contact-import-rows.js';
import { normaliseEmail } from './lookup.js';

/**
 * The import worker: the plan step and the chunk step of an import job (imports.ts describes both),
 * each safe to receive twice.
 */

/** Rows a chunk message imports. */
export const CHUNK_ROWS = 250;
/** Rows of a chunk imported at once. */
const ROW_CONCURRENCY = 25;

const chunkKeyOf = (job: Pick<ContactImport, 'objectKey'>, chunk: number) =>
  `${job.objectKey}.chunks/${pad(chunk, 6)}.json`;

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

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}
