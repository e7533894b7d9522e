import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { CrmContact, CrmListing, CrmRecord } from '../../../../functions/providers/crm/port.js';

/**
 * The demo CRM: a small HTTP service that plays a property and contact system. It holds accounts
 * (each its own listings and contacts; an account is made, with a few demo records, the first time it
 * is named) and a change feed per account: every change appends the record as it now is, with a
 * sequence number, and `GET /v1/accounts/{account}/changes?after=N&limit=L` reads the feed after N
 * (the adapter, functions/providers/crm/demo-crm.ts, reads it as the HubSpot adapter reads HubSpot).
 *
 * Controls (`/control/…`, used by `npm run cli -- crm …`, the tests and the demo): add or change a
 * listing, sell one (optionally twice in the feed), add a contact, delete a listing or a contact (the
 * feed carries the deletion: `{kind: 'listing_deleted' | 'contact_deleted', external_id}`), and faults: the next N reads of
 * the feed fail (500) or hang past the adapter's timeout, or the next read goes back in the feed and
 * hands back an older cursor.
 */

interface Account {
  listings: Record<string, CrmListing>;
  contacts: Record<string, CrmContact>;
  feed: { seq: number; record: CrmRecord }[];
  seq: number;
  faults: { mode: 'error' | 'timeout'; count: number; after: number } | null;
  rewindTo: number | null;
  reads: number;
}

interface State {
  accounts: Record<string, Account>;
}

export interface CrmSimulatorOptions {
  stateFile?: string;
  port?: number;
  /** How long a read hangs in the `timeout` fault; default 30 s (longer than the adapter waits). */
  hangMs?: number;
}

export interface CrmSimulator {
  url: string;
  port: number;
  stop(): Promise<void>;
}

class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A new account's records: five listings and three contacts (numbers reserved for fiction). */
function seedAccount(): Account {
  const account: Account = {
    listings: {},
    contacts: {},
    feed: [],
    seq: 0,
    faults: null,
    rewindTo: null,
    reads: 0,
  };
  const listings: CrmListing[] = [
    {
      external_id: 'L-1001',
      address: '12 Harbour Street',
      suburb: 'Manly',
      state: 'NSW',
      postcode: '2095',
      price_text: '$1,250,000',
      status: 'available',
      bedrooms: 3,
      bathrooms: 2,
      description: 'Sunny family home with harbour views, a renovated kitchen and a double garage.',
    },
    {
      external_id: 'L-1002',
      address: '4/88 Ocean Road',
      suburb: 'Bondi',
      state: 'NSW',
      postcode: '2026',
      price_text: '$890,000',
      status: 'available',
      bedrooms: 2,
      bathrooms: 1,
      description: 'Beachside apartment, walk to the sand, balcony and secure parking.',
    },
    {
      external_id: 'L-1003',
      address: '7 Wattle Grove',
      suburb: 'Parramatta',
      state: 'NSW',
      postcode: '2150',
      price_text: 'Offers over $1,100,000',
      status: 'under_offer',
      bedrooms: 4,
      bathrooms: 2,
      description: 'Quiet cul-de-sac, large backyard with a pool, close to schools.',
    },
    {
      external_id: 'L-1004',
      address: '150 George Street',
      suburb: 'Sydney',
      state: 'NSW',
      postcode: '2000',
      price_text: '$2,300,000',
      status: 'available',
      bedrooms: 3,
      bathrooms: 3,
      description: 'Penthouse in the heart of the city with a private rooftop terrace.',
    },
    {
      external_id: 'L-1005',
      address: '9 Banksia Avenue',
      suburb: 'Newtown',
      state: 'NSW',
      postcode: '2042',
      price_text: '$1,050,000',
      status: 'available',
      bedrooms: 2,
      bathrooms: 1,
      description: 'Charming terrace with a courtyard garden near King Street cafes.',
    },
  ];
  const contacts: CrmContact[] = [
    {
      external_id: 'C-2001',
      first_name: 'Olivia',
      last_name: 'Nguyen',
      phone: '+61491570001',
      email: 'olivia.nguyen@example.com',
    },
    { external_id: 'C-2002', first_name: 'Jack', last_name: 'Wilson', phone: '+61491570002' },
    { external_id: 'C-2003', first_name: 'Mia', last_name: 'Patel', email: 'mia.patel@example.com' },
  ];
  for (const listing of listings) change(account, { kind: 'listing', listing });
  for (const contact of contacts) change(account, { kind: 'contact', contact });
  return account;
}

function change(account: Account, record: CrmRecord): number {
  account.seq += 1;
  if (record.kind === 'listing') account.listings[record.listing.external_id] = record.listing;
  else if (record.kind === 'contact') account.contacts[record.contact.external_id] = record.contact;
  else if (record.kind === 'listing_deleted') delete account.listings[record.external_id];
  else delete account.contacts[record.external_id];
  account.feed.push({ seq: account.seq, record: JSON.parse(JSON.stringify(record)) as CrmRecord });
  return account.seq;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new SimError(400, 'body must be a JSON object');
  return parsed as Record<string, unknown>;
}

const optionalString = (body: Record<string, unknown>, name: string): string | undefined => {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new SimError(400, `${name} must be a string`);
  return value;
};

export async function startCrmSimulator(options: CrmSimulatorOptions = {}): Promise<CrmSimulator> {
  const state: State =
    options.stateFile && existsSync(options.stateFile)
      ? (JSON.parse(readFileSync(options.stateFile, 'utf8')) as State)
      : { accounts: {} };
  const hangMs = options.hangMs ?? 30_000;
  const hanging = new Set<ServerResponse>();

  const save = () => {
    if (!options.stateFile) return;
    mkdirSync(dirname(options.stateFile), { recursive: true });
    const tmp = `${options.stateFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, options.stateFile);
  };

  const account = (name: string): Account => {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new SimError(400, `bad account name ${name}`);
    let found = state.accounts[name];
    if (!found) {
      found = seedAccount();
      state.accounts[name] = found;
      save();
    }
    return found;
  };

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<unknown> {
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';
    // GET /v1/accounts/{account}/changes?after=&limit=
    if (method === 'GET' && parts[0] === 'v1' && parts[1] === 'accounts' && parts[3] === 'changes') {
      const acct = account(parts[2]);
      acct.reads += 1;
      if (acct.faults && acct.faults.after > 0) {
        acct.faults.after -= 1;
        save();
      } else if (acct.faults && acct.faults.count > 0) {
        acct.faults.count -= 1;
        const mode = acct.faults.mode;
        if (acct.faults.count === 0) acct.faults = null;
        save();
        if (mode === 'error') throw new SimError(500, 'simulated CRM failure');
        hanging.add(res);
        await new Promise((resolve) => setTimeout(resolve, hangMs));
        hanging.delete(res);
        throw new SimError(504, 'simulated CRM timeout');
      }
      const after = Number(url.searchParams.get('after') ?? '0');
      if (!Number.isInteger(after) || after < 0) throw new SimError(400, 'after must be a whole number');
      if (acct.rewindTo !== null) {
        // The CRM lost the caller's place (restored from a backup): it hands back an older cursor.
        const to = acct.rewindTo;
        acct.rewindTo = null;
        save();
        if (to < after) return { changes: [], cursor: String(to), more: true, remaining: acct.seq - to };
      }
      const limit = Math.min(500, Math.max(1, Number(url.searchParams.get('limit') ?? '100') || 100));
      const rest = acct.feed.filter((c) => c.seq > after);
      const changes = rest.slice(0, limit);
      const cursor = String(changes.at(-1)?.seq ?? after);
      return { changes, cursor, more: rest.length > limit, remaining: rest.length - changes.length };
    }
    if (parts[0] === 'v1' && parts[1] === 'accounts' && method === 'GET') {
      const acct = account(parts[2]);
      if (parts[3] === 'listings') return Object.values(acct.listings);
      if (parts[3] === 'contacts') return Object.values(acct.contacts);
    }
    if (parts[0] === 'control' && parts[1] === 'accounts' && method === 'POST') {
      const acct = account(parts[2]);
      const body = await readJson(req);
      const done = (result: unknown) => {
        save();
        return result;
      };
      // POST /control/accounts/{a}/listings/{id}/sell {twice?, sold_at?}
      if (parts[3] === 'listings' && parts[5] === 'sell') {
        const listing = acct.listings[parts[4]];
        if (!listing) throw new SimError(404, `no listing ${parts[4]} in account ${parts[2]}`);
        const sold: CrmListing = {
          ...listing,
          status: 'sold',
          sold_at: optionalString(body, 'sold_at') ?? new Date().toISOString(),
        };
        const seqs = [change(acct, { kind: 'listing', listing: sold })];
        if (body.twice === true) seqs.push(change(acct, { kind: 'listing', listing: sold }));
        return done({ listing: sold, seqs });
      }
      // POST /control/accounts/{a}/listings/{id}/delete, /control/accounts/{a}/contacts/{id}/delete
      if (
        (parts[3] === 'listings' || parts[3] === 'contacts') &&
        parts[5] === 'delete' &&
        parts.length === 6
      ) {
        const listing = parts[3] === 'listings';
        const held = listing ? acct.listings[parts[4]] : acct.contacts[parts[4]];
        if (!held)
          throw new SimError(404, `no ${listing ? 'listing' : 'contact'} ${parts[4]} in account ${parts[2]}`);
        const record: CrmRecord = listing
          ? { kind: 'listing_deleted', external_id: parts[4] }
          : { kind: 'contact_deleted', external_id: parts[4] };
        return done({ deleted: parts[4], seq: change(acct, record) });
      }
      // POST /control/accounts/{a}/listings {external_id, address, …}
      if (parts[3] === 'listings' && parts.length === 4) {
        const external =
          optionalString(body, 'external_id') ?? `L-${1000 + Object.keys(acct.listings).length + 1}`;
        const listing = { ...(acct.listings[external] ?? {}), ...body, external_id: external } as CrmListing;
        if (!listing.address) throw new SimError(400, 'address is required');
        listing.status ??= 'available';
        if (listing.status !== 'sold') delete listing.sold_at;
        return done({ listing, seq: change(acct, { kind: 'listing', listing }) });
      }
      // POST /control/accounts/{a}/contacts {phone?, email?, first_name?, last_name?}
      if (parts[3] === 'contacts' && parts.length === 4) {
        const phone = optionalString(body, 'phone');
        const email = optionalString(body, 'email');
        if (!phone && !email) throw new SimError(400, 'phone or email is required');
        const contact: CrmContact = {
          external_id:
            optionalString(body, 'external_id') ?? `C-${2000 + Object.keys(acct.contacts).length + 1}`,
          first_name: optionalString(body, 'first_name'),
          last_name: optionalString(body, 'last_name'),
          phone,
          email,
        };
        return done({ contact, seq: change(acct, { kind: 'contact', contact }) });
      }
      // POST /control/accounts/{a}/faults {mode: error|timeout, count, after?}: reads after the next `after` fail
      if (parts[3] === 'faults') {
        const mode = body.mode === 'timeout' ? 'timeout' : 'error';
        const count = Number(body.count ?? 1);
        const after = Math.max(0, Number(body.after ?? 0));
        acct.faults = count > 0 ? { mode, count, after } : null;
        return done({ faults: acct.faults });
      }
      // POST /control/accounts/{a}/rewind {to}: the next read hands back the cursor `to` (older) and no changes
      if (parts[3] === 'rewind') {
        acct.rewindTo = Math.max(0, Number(body.to ?? 0));
        return done({ rewind_to: acct.rewindTo });
      }
    }
    if (method === 'GET' && parts[0] === 'control' && parts[1] === 'accounts' && parts[3] === 'stats') {
      const acct = account(parts[2]);
      return { reads: acct.reads, seq: acct.seq, faults: acct.faults };
    }
    throw new SimError(404, `no route ${method} ${url.pathname}`);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    route(req, res, url)
      .then((result) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(result));
      })
      .catch((error: unknown) => {
        const status = error instanceof SimError ? error.status : 500;
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: (error as Error).message }));
      });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
