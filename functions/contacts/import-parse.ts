import { Readable } from 'node:stream';
import { parse as csvParser } from 'csv-parse';
import ICAL from 'ical.js';
import { normaliseAttributeKey } from './model.js';

/**
 * Reading an import file (CSV or vCard) into rows of contact fields. Nothing here writes or checks a
 * phone number: the rows are decided by functions/contacts/contact-import-rows.ts.
 *
 * - Encoding: UTF-8, with or without a byte-order mark. A file that is not valid UTF-8 is read as
 *   Windows-1252 (Latin-1 and its printable superset: what spreadsheet programs save as "CSV"), so
 *   `José` saved by Excel imports as `José`. (A direct `text/csv` body is decoded as text by API
 *   Gateway before it reaches us: a non-UTF-8 one is refused there; see imports.ts: createDirectImport.)
 * - CSV: the first record is the header; columns are matched by name, trimmed and case-insensitive,
 *   spaces, hyphens and underscores alike (`First Name` = `first_name` = `first-name`), with the
 *   aliases of HEADER_ALIASES; any other column becomes an attribute under its header's normalised
 *   key (model.ts normaliseAttributeKey: `Suburb` and `suburb` are one attribute, `suburb`; the first
 *   non-empty cell of such columns wins). Empty cells are absent values. Data rows are numbered from 1 (the header not counted); a row
 *   whose cells are all empty keeps its number but is not imported (nor counted in `total`).
 * - Cells are text, always: a cell starting with `=`, `+`, `-` or `@` (a spreadsheet formula) is kept
 *   verbatim and never evaluated. Anything that exports contacts to a spreadsheet must escape them.
 * - vCard 3.0 and 4.0 (ical.js): one row per card, numbered from 1. N (else FN) gives the names, the
 *   first TEL and EMAIL, CATEGORIES the tags, ORG, TITLE and NOTE attributes (`company`, `title`, `note`).
 */

/** The fields of one row, as written in the file (trimmed; empty ones absent). */
export interface RowFields {
  first_name?: string;
  last_name?: string;
  phone?: string;
  email?: string;
  tags?: string[];
  attributes?: Record<string, string>;
  /** A `contact_id` column (only with `ParseOptions.contactIdColumn`: a campaign's upload). */
  contact_id?: string;
}

/** How a file is read for a pipeline other than contact imports. */
export interface ParseOptions {
  /**
   * A `contact_id` column names an existing contact (a campaign's upload: `phone` or `contact_id`);
   * without it, such a column is an attribute like any other.
   */
  contactIdColumn?: boolean;
}

export interface ParsedRow {
  /** 1 = the first data row (CSV: after the header; vCard: the first card). */
  row: number;
  fields: RowFields;
}

/** The file cannot be read at all (the job fails with this reason, nothing is counted). */
export class ImportFileError extends Error {
  override readonly name = 'ImportFileError';
}

export type ImportEncoding = 'utf-8' | 'windows-1252';

/** The file's text: UTF-8 (its BOM dropped), else Windows-1252. */
export function decodeImportFile(bytes: Uint8Array): { text: string; encoding: ImportEncoding } {
  const body =
    bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
      ? bytes.subarray(3)
      : bytes;
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(body), encoding: 'windows-1252' };
  }
}

type Field = 'first_name' | 'last_name' | 'name' | 'phone' | 'email' | 'tags' | 'contact_id';
const CONTACT_ID_HEADERS = new Set(['contact_id', 'contactid']);

/** Header names (normalised: lower case, words joined by `_`) and the field each fills. */
export const HEADER_ALIASES: Record<string, Field> = {
  first_name: 'first_name',
  firstname: 'first_name',
  first: 'first_name',
  given_name: 'first_name',
  last_name: 'last_name',
  lastname: 'last_name',
  last: 'last_name',
  surname: 'last_name',
  family_name: 'last_name',
  name: 'name',
  full_name: 'name',
  phone: 'phone',
  phone_number: 'phone',
  mobile: 'phone',
  mobile_phone: 'phone',
  mobile_number: 'phone',
  telephone: 'phone',
  tel: 'phone',
  email: 'email',
  email_address: 'email',
  e_mail: 'email',
  tags: 'tags',
  tag: 'tags',
};

export const normaliseHeader = (header: string): string =>
  header
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');

/** Tags in one cell: separated by commas, semicolons or bars. */
const splitTags = (cell: string): string[] =>
  cell
    .split(/[,;|]/)
    .map((t) => t.trim())
    .filter((t) => t.length > 0);

/** `Jane Doe` → first `Jane`, last `Doe` (everything after the first word). */
function splitName(name: string): { first_name?: string; last_name?: string } {
  const [first, ...rest] = name.trim().split(/\s+/);
  return { first_name: first || undefined, last_name: rest.join(' ') || undefined };
}

async function* csvRecords(text: string): AsyncGenerator<string[]> {
  const parser = Readable.from([text]).pipe(
    csvParser({
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: 1_000_000,
    }),
  );
  try {
    for await (const record of parser) yield record as string[];
  } catch (error) {
    throw new ImportFileError(`the CSV file cannot be read: ${(error as Error).message}`);
  }
}

/** The rows of a CSV file; ImportFileError when it has no header or no phone or email column. */
export async function parseCsv(text: string, options: ParseOptions = {}): Promise<ParsedRow[]> {
  let columns: { field?: Field; attribute?: string }[] | undefined;
  const rows: ParsedRow[] = [];
  let number = 0;
  const keyColumns: Field[] = options.contactIdColumn ? ['phone', 'contact_id'] : ['phone', 'email'];
  for await (const record of csvRecords(text)) {
    if (!columns) {
      columns = record.map((header) => {
        const normalised = normaliseHeader(header);
        const field: Field | undefined =
          options.contactIdColumn && CONTACT_ID_HEADERS.has(normalised)
            ? 'contact_id'
            : HEADER_ALIASES[normalised];
        const attribute = normaliseAttributeKey(header);
        return field ? { field } : attribute ? { attribute } : {};
      });
      if (!columns.some((c) => c.field !== undefined && keyColumns.includes(c.field))) {
        throw new ImportFileError(
          `the header has no ${keyColumns.join(' or ')} column (found: ${record.map((h) => h.trim()).join(', ')})`,
        );
      }
      continue;
    }
    number += 1;
    if (record.every((cell) => !cell.trim())) continue; // a blank row: numbered, not imported
    const fields: RowFields & { name?: string } = {};
    record.forEach((raw, i) => {
      const cell = raw.trim();
      const column = columns?.[i];
      if (!cell || !column) return;
      if (column.field === 'tags') fields.tags = [...(fields.tags ?? []), ...splitTags(cell)];
      else if (column.field) fields[column.field] ??= cell;
      else if (column.attribute) (fields.attributes ??= {})[column.attribute] ??= cell;
    });
    const { name, ...rest } = fields;
    const row: RowFields =
      name && !rest.first_name && !rest.last_name ? { ...rest, ...splitName(name) } : rest;
    rows.push({ row: number, fields: row });
  }
  if (!columns) throw new ImportFileError('the file is empty');
  return rows;
}

type JCard = [string, [string, Record<string, unknown>, string, ...unknown[]][], unknown[]];

const first = (values: unknown[]): string | undefined => {
  const value = values.find((v) => typeof v === 'string' && v.trim());
  return typeof value === 'string' ? value.trim() : undefined;
};

function cardFields(card: JCard): RowFields {
  const props = card[1];
  const all = (name: string) => props.filter((p) => p[0] === name);
  const text = (name: string) => {
    const prop = all(name)[0];
    return prop ? first(prop.slice(3)) : undefined;
  };
  const fields: RowFields = {};
  const n = all('n')[0]?.[3];
  if (Array.isArray(n)) {
    const [family, given] = n as unknown[];
    const flat = (v: unknown) => (Array.isArray(v) ? v.join(' ') : typeof v === 'string' ? v : '').trim();
    if (flat(given)) fields.first_name = flat(given);
    if (flat(family)) fields.last_name = flat(family);
  }
  if (!fields.first_name && !fields.last_name) {
    const fn = text('fn');
    if (fn) Object.assign(fields, splitName(fn));
  }
  const tel = text('tel');
  if (tel) fields.phone = tel.replace(/^tel:/i, '');
  const email = text('email');
  if (email) fields.email = email.replace(/^mailto:/i, '');
  const tags = all('categories').flatMap((p) =>
    p.slice(3).flatMap((v) => (typeof v === 'string' ? splitTags(v) : [])),
  );
  if (tags.length > 0) fields.tags = tags;
  const attributes: Record<string, string> = {};
  const org = all('org')[0]?.[3];
  const orgName = Array.isArray(org) ? first(org) : typeof org === 'string' ? org.trim() : undefined;
  if (orgName) attributes.company = orgName;
  const title = text('title');
  if (title) attributes.title = title;
  const note = text('note');
  if (note) attributes.note = note.slice(0, 1000);
  if (Object.keys(attributes).length > 0) fields.attributes = attributes;
  return fields;
}

/** The cards of a vCard file (3.0 or 4.0); ImportFileError when it is not vCard. */
export function parseVcard(text: string): ParsedRow[] {
  if (!text.trim()) throw new ImportFileError('the file is empty');
  let parsed: unknown;
  try {
    parsed = ICAL.parse(text);
  } catch (error) {
    throw new ImportFileError(`the vCard file cannot be read: ${(error as Error).message}`);
  }
  const components = (Array.isArray(parsed) && Array.isArray(parsed[0]) ? parsed : [parsed]) as JCard[];
  const cards = components.filter((c) => Array.isArray(c) && c[0] === 'vcard');
  if (cards.length !== components.length)
    throw new ImportFileError('the file holds something other than vCards');
  return cards.map((card, i) => ({ row: i + 1, fields: cardFields(card) }));
}

export type ImportFormat = 'csv' | 'vcf';

export async function parseImportFile(
  bytes: Uint8Array,
  format: ImportFormat,
  options: ParseOptions = {},
): Promise<{ rows: ParsedRow[]; encoding: ImportEncoding }> {
  const { text, encoding } = decodeImportFile(bytes);
  const rows = format === 'csv' ? await parseCsv(text, options) : parseVcard(text);
  return { rows, encoding };
}
