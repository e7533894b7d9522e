import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import cliProgress from 'cli-progress';
import { ApiClient } from './api-client.js';

/**
 * `npm run cli -- import FILE --workspace WS (--email OWNER | --token TOKEN) [--format csv|vcf]`: asks
 * for an import job, PUTs the file to its presigned upload_url, starts it, and shows a progress bar
 * until the job ends; then the counts, the first rejected rows and the first warnings (rows imported
 * with a change the file did not ask for: a phone or e-mail dropped).
 */

interface ImportJob {
  id: string;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  progress: { done: number; total: number };
  counts: { total: number; created: number; merged: number; rejected: number };
  errors?: { row: number; reason: string }[];
  /** The first rows imported with a warning (the job lists at most WARNINGS_LISTED). */
  warnings?: { row: number; reason: string }[];
  failure_reason: string | null;
  upload_url?: string;
}

export function formatOf(file: string, format: string | undefined): 'csv' | 'vcf' {
  const chosen = (format ?? extname(file).slice(1)).toLowerCase();
  if (chosen === 'csv') return 'csv';
  if (chosen === 'vcf' || chosen === 'vcard') return 'vcf';
  throw new Error(`cannot tell the format of ${file}: pass --format csv or --format vcf`);
}

export async function importContacts(
  client: ApiClient,
  input: { file: string; workspaceId: string; format?: string; showProgress: boolean },
  log: (line: string) => void,
): Promise<ImportJob> {
  const format = formatOf(input.file, input.format);
  const bytes = await readFile(input.file);
  const imports = `/api/v1/workspaces/${input.workspaceId}/contacts/imports`;
  const created = await client.post<ImportJob>(imports, { format, file_name: basename(input.file) });
  const put = await fetch(created.upload_url!, { method: 'PUT', body: bytes });
  if (!put.ok) throw new Error(`upload failed: HTTP ${put.status} ${await put.text()}`);
  await client.post<ImportJob>(`${imports}/${created.id}/start`);
  log(`import ${created.id}: ${bytes.byteLength} bytes uploaded, processing`);
  const bar = input.showProgress
    ? new cliProgress.SingleBar(
        { format: 'importing [{bar}] {percentage}% | {value}/{total} rows', hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  for (;;) {
    const job = await client.get<ImportJob>(`${imports}/${created.id}`);
    const total = Math.max(job.counts.total, 1);
    if (bar && job.counts.total > 0) {
      if (!started) bar.start(total, 0);
      started = true;
      bar.update(job.progress.done);
    }
    if (job.status === 'completed' || job.status === 'failed') {
      bar?.stop();
      return job;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** How many warnings the job lists (functions/contacts/import-pipeline.ts MAX_ERRORS): more may exist. */
const WARNINGS_LISTED = 100;
const REJECTED_SHOWN = 10;
const WARNINGS_SHOWN = 5;

export function describeImport(job: ImportJob): string {
  if (job.status === 'failed') return `Import ${job.id} failed: ${job.failure_reason}`;
  const { total, created, merged, rejected } = job.counts;
  const warnings = job.warnings ?? [];
  // The job lists its first WARNINGS_LISTED: a full list may have more.
  const more = warnings.length >= WARNINGS_LISTED ? '+' : '';
  const warned = `${warnings.length}${more}`;
  const lines = [
    `Import ${job.id} completed: ${total} rows, ${created} created, ${merged} merged, ${rejected} rejected, ` +
      `${warned} warning${warnings.length === 1 ? '' : 's'}`,
  ];
  for (const error of (job.errors ?? []).slice(0, REJECTED_SHOWN))
    lines.push(`  row ${error.row}: ${error.reason}`);
  if (rejected > REJECTED_SHOWN) lines.push(`  … ${rejected - REJECTED_SHOWN} more rejected rows`);
  if (warnings.length > 0) lines.push('Warnings (imported with a change):');
  for (const warning of warnings.slice(0, WARNINGS_SHOWN))
    lines.push(`  row ${warning.row}: ${warning.reason}`);
  if (warnings.length > WARNINGS_SHOWN)
    lines.push(`  … ${warnings.length - WARNINGS_SHOWN}${more} more warnings`);
  return lines.join('\n');
}
