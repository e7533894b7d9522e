import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { clock } from '../platform/clock.js';
import { notFound, ValidationError } from '../platform/errors.js';
import type { ListQuery } from '../platform/pagination.js';
import { toE164 } from '../platform/phone.js';
import { isConditionFailure } from '../platform/table.js';
import { parseOrThrow } from '../platform/validation.js';
import { SuppressionEntity, type Suppression } from './entities.js';
import { onePage, type Page } from './paging.js';
import { PutSuppressionBody } from './schemas.js';

/**
 * The organisation's suppression (do-not-call) list: numbers no campaign or SMS of any of its
 * workspaces may contact. Campaigns and SMS ask `isSuppressed` / `suppressedAmong` before every send.
 * One item per number (`ORG#<org>` / `SUPPRESSED#<e164>`): a lookup is one GetItem, a batch one
 * BatchGetItem per 100 numbers.
 */

export const SUPPRESSION_NOT_FOUND = 'Suppression entry not found';

const suppressionConversions = onFirstUse(() => createConversions(SuppressionEntity));

/**
 * The `{phone}` of a path: E.164, URL-encoded (`%2B61…`) or with a literal `+`. A gateway that
 * decodes `+` as a space (form encoding) hands over ` 61…`, read as `+61…`; one that leaves the
 * path encoded hands over `%2B61…`, decoded here. 422 on `path.phone` when it is not an E.164 number.
 */
export function suppressedPhoneFromPath(raw: string): string {
  let value = raw;
  if (value.includes('%')) {
    try {
      value = decodeURIComponent(value);
    } catch {
      // not encoded after all: checked as is below
    }
  }
  if (/^ \d/.test(value)) value = `+${value.slice(1)}`;
  const e164 = value.startsWith('+') ? toE164(value) : undefined;
  if (!e164) {
    throw new ValidationError([
      {
        type: 'value_error',
        loc: ['path', 'phone'],
        msg: 'Value error, phone must be an E.164 number (+61491570156; URL-encoded: %2B61491570156)',
        input: raw,
      },
    ]);
  }
  return e164;
}

/** Adds the number (or changes its reason); keeps when it was first added. */
export async function suppressNumber(
  organisationId: string,
  phone: string,
  input: PutSuppressionBody,
  createdBy: string,
): Promise<Suppression> {
  const body = parseOrThrow(PutSuppressionBody, input, 'body');
  const now = clock.now().toISOString();
  const { data } = await SuppressionEntity.upsert({
    organisationId,
    phone,
    reason: body?.reason ?? '',
    updatedAt: now,
  })
    .ifNotExists({ createdAt: now, createdBy })
    .go({ response: 'all_new' });
  return data as Suppression;
}

/** Removes the number; 404 when it is not on the list. */
export async function unsuppressNumber(organisationId: string, phone: string): Promise<void> {
  try {
    await SuppressionEntity.delete({ organisationId, phone })
      .where((attr, op) => op.exists(attr.createdAt))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(SUPPRESSION_NOT_FOUND);
    throw error;
  }
}

/** The list, by number. */
export async function listSuppressed(organisationId: string, query: ListQuery): Promise<Page<Suppression>> {
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    run: (options) => SuppressionEntity.query.byOrganisation({ organisationId }).go(options),
    cursorAfter: (entry) =>
      suppressionConversions().byAccessPattern.byOrganisation.fromComposite.toCursor({
        organisationId,
        phone: entry.phone,
      }),
  });
}

/** Whether the organisation's list holds this number (any international form; anything else is not on it). */
export async function isSuppressed(organisationId: string, phone: string): Promise<boolean> {
  const e164 = toE164(phone);
  if (!e164) return false;
  const { data } = await SuppressionEntity.get({ organisationId, phone: e164 }).go({ consistent: true });
  return data !== null;
}

/**
 * The numbers of `phones` on the organisation's list (E.164), for a batch of sends: BatchGetItem,
 * 100 keys a request, unprocessed keys asked again.
 */
export async function suppressedAmong(organisationId: string, phones: string[]): Promise<Set<string>> {
  const numbers = [...new Set(phones.map((p) => toE164(p)).filter((p): p is string => p !== undefined))];
  const found = new Set<string>();
  let pending = numbers.map((phone) => ({ organisationId, phone }));
  for (let attempt = 0; pending.length > 0; attempt += 1) {
    if (attempt >= 8) throw new Error(`could not read ${pending.length} suppression entries; try again`);
    const { data, unprocessed } = await SuppressionEntity.get(pending).go({ consistent: true });
    for (const entry of data) found.add(entry.phone);
    pending = unprocessed.map((key) => ({ organisationId, phone: key.phone }));
  }
  return found;
}
