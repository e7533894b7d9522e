import { join } from 'node:path';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { resetTableClients, tableName } from '../../../functions/platform/table.js';
import type { AttributeValue, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { batchWriteFloorOf, transactWriteAll } from './batch-write-floor.js';
import { startBenchStack } from './stack-process.js';

/**
 * The 50,000-row CSV import (spec: bulk ingestion), on a stack of its own: the bench writes a CSV with
 * 2 % invalid rows (no phone or email) and 5 % duplicates (the phone number of an earlier row), PUTs
 * it to the presigned URL, starts the job and waits for `completed`; rows per second from the start
 * to the end, and the counts checked exactly. Its floor, measured in the same run against the same
 * DynamoDB Local: as many items as the file has rows, each a contact-sized item, written straight
 * with BatchWriteItem (25 a request, FLOOR_CONCURRENCY requests at once) with the handlers' own client.
 * Both are measured warm: an unmeasured import of WARM_UP_ROWS other rows runs first (the floor runs
 * after the import, on a JVM that has compiled DynamoDB Local's write paths). The report also gives
 * the CPU per row of DynamoDB Local and of the stack, and the items per row by command: where the
 * import's time goes next to the floor's CPU per item. And two ceilings (see invariantsCeiling): what
 * the contacts' uniqueness alone costs, so the ratio can be read against what any design could reach.
 */

export interface ImportReport {
  rows: number;
  expected: { created: number; merged: number; rejected: number };
  counts: { total: number; created: number; merged: number; rejected: number };
  exact: boolean;
  seconds: number;
  rowsPerSecond: number;
  floor: { items: number; seconds: number; itemsPerSecond: number; dynamodbLocalCpuMsPerItem?: number };
  /** Where the import's time went: per row, DynamoDB Local's CPU and the stack's (Node) CPU, and the items written by command. */
  cost: {
    dynamodbLocalCpuMsPerRow?: number;
    stackCpuMsPerRow: number;
    itemsPerRow: Record<string, number>;
  };
  ratio: number;
  /** Rows per second over the floor's items per second if the import did nothing but its conditioned writes. */
  ceilings: Ceiling[];
  budget: number;
  withinBudget: boolean;
}

export interface Ceiling {
  label: string;
  itemsPerRow: number;
  seconds: number;
  rowsPerSecond: number;
  ratio: number;
}

export const IMPORT_BUDGET = 0.5;
/** Rows of the unmeasured import that warms the stack and DynamoDB Local up. */
const WARM_UP_ROWS = 2_000;

async function runImport(owner: ApiClient, imports: string, csv: string): Promise<void> {
  const job = await owner.post<{ id: string; upload_url: string }>(imports, { format: 'csv' });
  const put = await fetch(job.upload_url, { method: 'PUT', body: csv });
  if (!put.ok) throw new Error(`upload: HTTP ${put.status}`);
  await owner.post(`${imports}/${job.id}/start`);
  for (;;) {
    const { status } = await owner.get<{ status: string }>(`${imports}/${job.id}`);
    if (status === 'completed') return;
    if (status === 'failed') throw new Error('the warm-up import failed');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export function importCsv(
  rows: number,
  /** The numbers' prefix after +61 (a warm-up file uses another, so that its contacts match none of the file's). */
  prefix = '41',
  /** The email addresses' domain. */
  domain = 'example.com',
): { csv: string; expected: ImportReport['expected'] } {
  const lines = ['first_name,last_name,phone,email,tags,company'];
  let created = 0;
  let merged = 0;
  let rejected = 0;
  for (let i = 1; i <= rows; i += 1) {
    const phone = `+61${prefix}${String(i).padStart(7, '0')}`;
    if (i % 50 === 0) {
      lines.push(`Invalid,Row${i},,,x,Acme`); // 2 %: neither phone nor email
      rejected += 1;
    } else if (i % 20 === 1 && i > 20) {
      const earlier = i - 12; // 5 %: an earlier created row's number (odd, never a duplicate)
      lines.push(`Dup,Row${i},+61${prefix}${String(earlier).padStart(7, '0')},dup${i}@${domain},dup,`);
      merged += 1;
    } else {
      lines.push(`First${i},Last${i},${phone},person${i}@${domain},"lead,bench",Company ${i % 97}`);
      created += 1;
    }
  }
  return { csv: `${lines.join('\n')}\n`, expected: { created, merged, rejected } };
}

/** A contact-sized item's attributes (the floor's items, and the ceilings' contacts). */
const contactAttributes = (i: number): Record<string, AttributeValue> => ({
  firstName: { S: `First${i}` },
  lastName: { S: `Last${i}` },
  phone: { S: `+6141${String(i).padStart(7, '0')}` },
  email: { S: `person${i}@example.com` },
  tags: { L: [{ S: 'lead' }, { S: 'bench' }] },
  customAttributes: { M: { company: { S: `Company ${i % 97}` } } },
  source: { S: 'CSV' },
  createdAt: { S: new Date().toISOString() },
});

const floor = (items: number): Promise<ImportReport['floor']> =>
  batchWriteFloorOf(items, 'BENCHIMPORT', contactAttributes);

/** Rows a created contact's transaction holds: 33 contacts of 3 items, under TransactWriteItems' 100. */
const CONTACTS_PER_TRANSACTION = 33;

/**
 * The floor of an import that keeps the contacts' invariant (two concurrent creates of one number or
 * address make one contact: each unique value is an item created with "does not exist", in the
 * transaction of its contact) and does nothing else: no file read, no row parsed, no key read first,
 * no search entry, no count; the file's created contacts only (its merged and rejected rows free).
 * Written like the floor, to the same DynamoDB Local, FLOOR_CONCURRENCY transactions of 33 contacts
 * at once. Two layouts: today's (the contact, its phone key and its email key: 3 items a contact),
 * and the least any layout with both unique values could write (the contact stored as its own phone
 * key, and its email key: 2). Rows per second are the file's rows over the time taken.
 */
async function invariantsCeiling(rows: number, created: number, itemsPerRow: 2 | 3): Promise<Ceiling> {
  const partition = { S: `BENCHCEILING#${itemsPerRow}#${Date.now().toString(36)}` };
  const put = (item: Record<string, AttributeValue>): TransactWriteItem => ({
    Put: { TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
  });
  const transactions: TransactWriteItem[][] = [];
  for (let first = 0; first < created; first += CONTACTS_PER_TRANSACTION) {
    const items: TransactWriteItem[] = [];
    for (let i = first; i < Math.min(created, first + CONTACTS_PER_TRANSACTION); i += 1) {
      const contact = contactAttributes(i);
      const phoneKey = { S: `CONTACTPHONE#${contact.phone.S}` };
      const emailKey = {
        pk: partition,
        sk: { S: `CONTACTEMAIL#${contact.email.S}` },
        contactId: { S: `ct_${i}` },
      };
      if (itemsPerRow === 3) {
        items.push(put({ pk: partition, sk: { S: `CONTACT#ct_${i}` }, ...contact }));
        items.push(put({ pk: partition, sk: phoneKey, contactId: { S: `ct_${i}` } }));
      } else {
        items.push(put({ pk: partition, sk: phoneKey, contactId: { S: `ct_${i}` }, ...contact }));
      }
      items.push(put(emailKey));
    }
    transactions.push(items);
  }
  const seconds = await transactWriteAll(transactions);
  return {
    label:
      itemsPerRow === 3
        ? 'contact, phone key, email key (today)'
        : 'contact as its own phone key, email key (the least)',
    itemsPerRow,
    seconds,
    rowsPerSecond: rows / seconds,
    ratio: 0,
  };
}

export async function measureImport(options: {
  root: string;
  rows: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<ImportReport> {
  const { log } = options;
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-import`),
    logPath: join(options.root, '.local', 'bench-stack-import.log'),
    env: options.env,
  });
  const environment = { ...process.env };
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const imports = `/api/v1/workspaces/${demo.workspace_id}/contacts/imports`;
    // Warm-up: the floor is measured after the import, on a DynamoDB Local whose JVM has compiled its
    // write paths; a cold JVM costs the first few thousand items several times as much CPU. So a small
    // import of other numbers runs first, unmeasured (its contacts never match the file's).
    const warmUpRows = Math.min(WARM_UP_ROWS, options.rows);
    log(`import: warm-up of ${warmUpRows} rows (not measured)`);
    await runImport(owner, imports, importCsv(warmUpRows, '42', 'warm.example.com').csv);
    const { csv, expected } = importCsv(options.rows);
    const job = await owner.post<{ id: string; upload_url: string }>(imports, { format: 'csv' });
    const put = await fetch(job.upload_url, { method: 'PUT', body: csv });
    if (!put.ok) throw new Error(`upload: HTTP ${put.status}`);
    log(`import: ${options.rows} rows (${(csv.length / 1e6).toFixed(1)} MB)`);
    const before = await stack.metrics();
    const started = performance.now();
    await owner.post(`${imports}/${job.id}/start`);
    let done: { status: string; counts: ImportReport['counts']; progress: { done: number; total: number } };
    let shown = -1;
    for (;;) {
      done = await owner.get(`${imports}/${job.id}`);
      if (done.status === 'completed' || done.status === 'failed') break;
      const share = done.progress.total > 0 ? done.progress.done / done.progress.total : 0;
      const tenth = Math.floor(share * 10);
      if (tenth !== shown) log(`import: ${Math.round(share * 100)} %`);
      shown = tenth;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const seconds = (performance.now() - started) / 1000;
    const after = await stack.metrics();
    if (done.status !== 'completed') throw new Error(`the import ended ${done.status}`);
    await stack.settle();
    Object.assign(process.env, stack.state.env);
    // Clients made for an earlier part of the run point at its stopped stack.
    resetTableClients();
    log(`import floor: ${options.rows} items with BatchWriteItem`);
    const javaBefore = (await stack.metrics()).dynamodb_local_cpu_ms;
    const measuredFloor = await floor(options.rows);
    const javaAfter = (await stack.metrics()).dynamodb_local_cpu_ms;
    log("import ceilings: the created contacts' conditioned writes alone");
    const ceilings: Ceiling[] = [];
    for (const itemsPerRow of [3, 2] as const) {
      const ceiling = await invariantsCeiling(options.rows, expected.created, itemsPerRow);
      ceilings.push({ ...ceiling, ratio: ceiling.rowsPerSecond / measuredFloor.itemsPerSecond });
    }
    const perRow = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? undefined : (b - a) / options.rows;
    const itemsPerRow = Object.fromEntries(
      Object.entries(after.dynamodb_items)
        .map(([command, n]) => [command, (n - (before.dynamodb_items[command] ?? 0)) / options.rows] as const)
        .filter(([, n]) => n > 0),
    );
    const rowsPerSecond = options.rows / seconds;
    const ratio = rowsPerSecond / measuredFloor.itemsPerSecond;
    const { counts } = done;
    return {
      rows: options.rows,
      expected,
      counts,
      exact:
        counts.total === options.rows &&
        counts.created === expected.created &&
        counts.merged === expected.merged &&
        counts.rejected === expected.rejected,
      seconds,
      rowsPerSecond,
      floor: { ...measuredFloor, dynamodbLocalCpuMsPerItem: perRow(javaBefore, javaAfter) },
      cost: {
        dynamodbLocalCpuMsPerRow: perRow(before.dynamodb_local_cpu_ms, after.dynamodb_local_cpu_ms),
        stackCpuMsPerRow: (after.cpu_ms - before.cpu_ms) / options.rows,
        itemsPerRow,
      },
      ratio,
      ceilings,
      budget: IMPORT_BUDGET,
      withinBudget: ratio >= IMPORT_BUDGET,
    };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in environment)) delete process.env[key];
    Object.assign(process.env, environment);
    await stack.stop();
  }
}

export function importTable(r: ImportReport): string[] {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  const ms = (n: number | undefined) => (n === undefined ? '?' : n.toFixed(2));
  return [
    '| measure | floor (BatchWriteItem, same DynamoDB Local) | import (presigned upload → completed) | ratio | budget | |',
    '|---|---:|---:|---:|---:|---|',
    `| ${r.rows} rows | ${f(r.floor.itemsPerSecond)} items/s (${f(r.floor.seconds)} s) | ${f(r.rowsPerSecond)} rows/s (${f(r.seconds)} s) | ${f(r.ratio, 2)}x | ≥ ${r.budget}x | ${r.withinBudget ? 'within' : '**OVER**'} |`,
    `| cost per row | DynamoDB Local CPU ${ms(r.floor.dynamodbLocalCpuMsPerItem)} ms an item | DynamoDB Local CPU ${ms(r.cost.dynamodbLocalCpuMsPerRow)} ms, stack CPU ${ms(r.cost.stackCpuMsPerRow)} ms; items ${Object.entries(
      r.cost.itemsPerRow,
    )
      .map(([command, n]) => `${command} ${n.toFixed(2)}`)
      .join(', ')} | | | |`,
    ...r.ceilings.map(
      (c) =>
        `| ceiling: ${c.label}, ${c.itemsPerRow} conditioned items a created contact, nothing else | | ${f(c.rowsPerSecond)} rows/s (${f(c.seconds)} s) | ${f(c.ratio, 2)}x | | the most any import keeping the invariant could reach |`,
    ),
    `| counts | | total ${r.counts.total}, created ${r.counts.created}, merged ${r.counts.merged}, rejected ${r.counts.rejected} | | expected ${r.expected.created} / ${r.expected.merged} / ${r.expected.rejected} | ${r.exact ? 'exact' : '**WRONG**'} |`,
  ];
}
