import { CrmProviderError, type CrmChangePage, type CrmProvider, type CrmRecord } from './port.js';

/**
 * The local adapter: reads the demo CRM simulator's change feed (lib/local/simulators/crm/server.ts,
 * started by the local stack; its URL in CRM_SIMULATOR_URL) over HTTP, as the HubSpot adapter reads
 * HubSpot. `account` picks one of the simulator's accounts (each its own listings and contacts).
 * Cursors are change sequence numbers.
 */
export class DemoCrm implements CrmProvider {
  readonly name = 'demo_crm' as const;

  constructor(private readonly settings: { url?: string; account: string; timeoutMs: number }) {}

  async readChanges(input: { cursor: string | null; limit: number }): Promise<CrmChangePage> {
    const { url, account, timeoutMs } = this.settings;
    if (!url) throw new CrmProviderError('CRM_SIMULATOR_URL is not set: is the local demo CRM running?');
    const query = new URLSearchParams({ after: input.cursor ?? '0', limit: String(input.limit) });
    let response: Response;
    try {
      response = await fetch(`${url}/v1/accounts/${encodeURIComponent(account)}/changes?${query}`, {
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new CrmProviderError(`the demo CRM did not answer: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const text = await response.text();
    if (!response.ok)
      throw new CrmProviderError(`the demo CRM answered ${response.status}: ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as {
      changes: { seq: number; record: CrmRecord }[];
      cursor: string;
      more: boolean;
      remaining: number;
    };
    return {
      records: body.changes.map((c) => c.record),
      cursor: body.cursor,
      more: body.more,
      remaining: body.remaining,
    };
  }

  compareCursors(a: string, b: string): number {
    return Number(a) - Number(b);
  }
}
