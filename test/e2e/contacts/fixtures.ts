import { api, type ApiResponse, type Json } from '../../helpers/http.js';
import { ws, type Tenant } from '../calling/fixtures.js';

/**
 * Contacts through the gateway. Tenants, members and API keys are the calling suite's fixtures
 * (opened with the tenancy kernel's own service); every contact, note and suppressed number is made
 * through the routes under test.
 */
export { addMember, apiKey, newTenant, newUser, ws, type Tenant, type User } from '../calling/fixtures.js';

export const contactsPath = (tenant: Tenant) => `${ws(tenant)}/contacts`;
export const contactPath = (tenant: Tenant, contactId: string) => `${contactsPath(tenant)}/${contactId}`;
export const notesPath = (tenant: Tenant, contactId: string) => `${contactPath(tenant, contactId)}/notes`;
export const suppressionPath = (tenant: Tenant) =>
  `/api/v1/organisations/${tenant.organisationId}/suppression-list`;

/** A valid Australian mobile number (E.164), a new one each call within a test file. */
let sequence = Math.floor(Math.random() * 500_000);
export function uniqueMobile(): string {
  sequence += 1;
  return `+61491${String(sequence % 1_000_000).padStart(6, '0')}`;
}

export async function createContact(
  tenant: Tenant,
  body: Record<string, unknown>,
  token = tenant.owner.token,
) {
  const res = await api('POST', contactsPath(tenant), { token, body });
  if (res.status !== 201) throw new Error(`create contact: ${res.status} ${res.text}`);
  return res.body as Json;
}

/** Every page of a list (following next_cursor), and the pages themselves. */
export async function allPages(
  path: string,
  token: string,
  query: Record<string, string> = {},
): Promise<{ items: Json[]; pages: ApiResponse[] }> {
  const items: Json[] = [];
  const pages: ApiResponse[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const res = await api('GET', `${path}?${params.toString()}`, { token });
    if (res.status !== 200) throw new Error(`list ${path}: ${res.status} ${res.text}`);
    pages.push(res);
    items.push(...(res.body.items as Json[]));
    cursor = res.body.next_cursor as string | null;
    if (pages.length > 100) throw new Error('more than 100 pages');
  } while (cursor);
  return { items, pages };
}

/** Runs `make` for 0..n-1, `concurrency` at a time. */
export async function inBatches<T>(n: number, concurrency: number, make: (i: number) => Promise<T>) {
  const results: T[] = [];
  for (let start = 0; start < n; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, n - start) }, (_, k) => make(start + k));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

/** The `type` of each 422 issue, with its location. */
export const issues = (res: ApiResponse) =>
  (res.body.detail as { type: string; loc: (string | number)[] }[]).map(
    (d) => `${d.loc.join('.')}:${d.type}`,
  );

export const UNKNOWN_CONTACT = 'ct_01JZZZZZZZZZZZZZZZZZZZZZZZ';
export const UNKNOWN_NOTE = 'note_01JZZZZZZZZZZZZZZZZZZZZZZZ';
