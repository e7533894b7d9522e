import type { CrmContact, CrmListing } from '../../../../functions/providers/crm/port.js';

/**
 * Controls of the demo CRM (lib/local/simulators/crm/server.ts) for the CLI, tests and demos: what a
 * user of the real CRM would do. `baseUrl` is the simulator's (CRM_SIMULATOR_URL in stack.json).
 */
async function call<T>(baseUrl: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`demo CRM: ${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

const acct = (account: string) => `/accounts/${encodeURIComponent(account)}`;

export const crmSimulator = (baseUrl: string, account = 'demo') => ({
  listings: () => call<CrmListing[]>(baseUrl, 'GET', `/v1${acct(account)}/listings`),
  contacts: () => call<CrmContact[]>(baseUrl, 'GET', `/v1${acct(account)}/contacts`),
  sell: (externalId: string, options: { twice?: boolean; soldAt?: string } = {}) =>
    call<{ listing: CrmListing; seqs: number[] }>(
      baseUrl,
      'POST',
      `/control${acct(account)}/listings/${encodeURIComponent(externalId)}/sell`,
      { twice: options.twice ?? false, ...(options.soldAt ? { sold_at: options.soldAt } : {}) },
    ),
  putListing: (listing: Partial<CrmListing> & { address: string }) =>
    call<{ listing: CrmListing; seq: number }>(baseUrl, 'POST', `/control${acct(account)}/listings`, listing),
  /** Deletes a listing or a contact in the CRM: the feed carries the deletion. */
  deleteListing: (externalId: string) =>
    call<{ deleted: string; seq: number }>(
      baseUrl,
      'POST',
      `/control${acct(account)}/listings/${encodeURIComponent(externalId)}/delete`,
    ),
  deleteContact: (externalId: string) =>
    call<{ deleted: string; seq: number }>(
      baseUrl,
      'POST',
      `/control${acct(account)}/contacts/${encodeURIComponent(externalId)}/delete`,
    ),
  addContact: (contact: Partial<CrmContact>) =>
    call<{ contact: CrmContact; seq: number }>(baseUrl, 'POST', `/control${acct(account)}/contacts`, contact),
  /**
   * `count` reads of the feed fail, after the next `after` succeed: `error` (500) or `timeout` (no
   * answer in the adapter's time).
   */
  fail: (mode: 'error' | 'timeout', count: number, after = 0) =>
    call(baseUrl, 'POST', `/control${acct(account)}/faults`, { mode, count, after }),
  /** The next read of the feed answers with no changes and the cursor `to`: the cursor goes backwards. */
  rewind: (to: number) => call(baseUrl, 'POST', `/control${acct(account)}/rewind`, { to }),
  stats: () => call<{ reads: number; seq: number }>(baseUrl, 'GET', `/control${acct(account)}/stats`),
});
