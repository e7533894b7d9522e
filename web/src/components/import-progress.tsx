import { useQuery } from '@tanstack/preact-query';
import { ErrorState } from './ui';

export interface ImportJob {
  status: 'pending' | 'processing' | 'completed' | 'failed';
  progress: { done: number; total: number };
  counts: { total: number; created: number; merged?: number; rejected: number };
  failure_reason: string | null;
  errors?: { row: number; reason: string }[];
}

/** A file import's live progress bar, then its counts and the rejected rows. */
export function ImportProgress({ queryKey, load }: { queryKey: unknown[]; load: () => Promise<ImportJob> }) {
  const job = useQuery({
    queryKey,
    queryFn: load,
    refetchInterval: (query) => {
      const status = query.state.data?.status;
      return status === 'completed' || status === 'failed' ? false : 700;
    },
  });
  if (job.isError) return <ErrorState error={job.error} />;
  return <ImportProgressView job={job.data} />;
}

/** An import's progress bar, counts and rejected rows (`job` undefined: not started yet). */
export function ImportProgressView({ job: data }: { job: ImportJob | undefined }) {
  const total = data?.progress.total ?? 0;
  const done = data?.progress.done ?? 0;
  const percent = data?.status === 'completed' ? 100 : total > 0 ? Math.floor((done / total) * 100) : 0;
  return (
    <div class="card import">
      <label>
        Import progress
        <progress max={100} value={percent} aria-valuetext={`${percent} %`} />
      </label>
      <p role="status">
        {data ? `${data.status}: ${percent} %` : 'Starting…'}
        {data?.status === 'completed' &&
          ` — ${data.counts.created} created${data.counts.merged === undefined ? '' : `, ${data.counts.merged} merged`}, ${data.counts.rejected} rejected`}
        {data?.status === 'failed' && ` — ${data.failure_reason ?? 'failed'}`}
      </p>
      {data?.errors && data.errors.length > 0 && (
        <details open>
          <summary>Rejected rows ({data.errors.length})</summary>
          <ul>
            {data.errors.map((error) => (
              <li key={error.row}>
                Row {error.row}: {error.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/** PUTs a file to a presigned upload URL. */
export async function uploadFile(url: string, file: File): Promise<void> {
  const response = await fetch(url, { method: 'PUT', body: file });
  if (!response.ok) throw new Error(`The upload failed (${response.status}).`);
}
