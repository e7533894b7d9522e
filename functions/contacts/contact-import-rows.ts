import { createHash } from 'node:crypto';
import { ID_PREFIXES } from '../platform/ids.js';
import { inParallel } from '../platform/parallel.js';
import { toE164InCountry } from '../platform/phone.js';
import { sendMessage, sendMessages } from '../platform/queue.js';
import { createImportedContacts } from './bulk-creation.js';
import { mergeContact } from './creation.js';
import type { ContactImport } from './entities.js';
import type { ImportFormat, ParsedRow, RowFields } from './import-parse.js';
import { MAX_ERRORS, type ChunkTally, type ImportPipeline } from './import-pipeline.js';
import { checkContactInput, type NewContactFields } from './input.js';
import { normaliseEmail } from './lookup.js';
import type { ContactInput } from './schemas.js';

/**
 * A contact import's rows: the pipeline of contact imports (on the `imports` queue), each row checked
 * and made a contact's input (rowInput), then created in bulk or merged (importContactRows), the
 * contact's id derived from the job and the row (importedContactId).
 */

const SOURCE = { csv: 'csv', vcf: 'vcf' } as const;

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
