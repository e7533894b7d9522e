import { clock } from '../platform/clock.js';
import { isConditionFailure } from '../platform/table.js';
import { ContactImportRowEntity, type ContactImport } from './entities.js';
import type { ParseOptions, ParsedRow } from './import-parse.js';

/**
 * What the import job machinery (imports.ts: the jobs; import-worker.ts: plan and chunks) asks of the
 * imports that use it: contact imports (contact-import-rows.ts) and a campaign's uploads. Also each
 * row's outcome record, for pipelines that decide row by row.
 */

/** The job shows the first rejected rows. */
export const MAX_ERRORS = 100;
const ROW_RECORD_DAYS = 30;

/** A chunk's or a row's number as its key spells it (zero-padded: chunks 6 digits, rows 8). */
export const pad = (n: number, width: number) => String(n).padStart(width, '0');

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

/** The key and expiry of a row's outcome record. */
export const rowRecordBase = (job: ContactImport, row: ParsedRow): RowRecordBase => ({
  workspaceId: job.workspaceId,
  jobId: job.jobId,
  row: pad(row.row, 8),
  expiresAt: Math.floor(clock.now().getTime() / 1000) + ROW_RECORD_DAYS * 86_400,
});

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
