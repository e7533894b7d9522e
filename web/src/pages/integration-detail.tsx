import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { ErrorState, FormError, Loading, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Action = 'connect' | 'sync' | 'disconnect';

/** A running sync job's live progress (changes read of those known so far). */
function ActiveJob({ integration_id, job_id }: { integration_id: string; job_id: string }) {
  const workspace_id = useWorkspaceId();
  const job = useQuery({
    queryKey: ['integration-job', workspace_id, integration_id, job_id],
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}/jobs/{job_id}', {
          params: { path: { workspace_id, integration_id, job_id } },
        }),
      ),
    refetchInterval: (query) => (query.state.data?.status === 'processing' ? 700 : false),
  });
  if (job.isError) return <ErrorState error={job.error} />;
  const data = job.data;
  const percent =
    data?.status === 'completed'
      ? 100
      : data && data.progress.total > 0
        ? Math.floor((data.progress.done / data.progress.total) * 100)
        : 0;
  return (
    <div class="card">
      <label>
        Sync progress
        <progress max={100} value={percent} aria-valuetext={`${percent} %`} />
      </label>
      <p role="status">
        {data ? `${data.kind} sync ${data.status}: ${data.progress.done} changes read` : 'Starting…'}
      </p>
    </div>
  );
}

export default function IntegrationDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const integration_id = useRoute().params.id;
  const queries = useQueryClient();
  const key = ['integration', workspace_id, integration_id];
  const integration = useQuery({
    queryKey: key,
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}', {
          params: { path: { workspace_id, integration_id } },
        }),
      ),
    refetchInterval: (query) => (query.state.data?.active_job_id ? 1000 : 5000),
  });
  const act = useMutation({
    mutationFn: async (action: Action): Promise<void> => {
      const path = { workspace_id, integration_id };
      if (action === 'connect')
        await ok(
          api().POST('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}/connect', {
            params: { path },
          }),
        );
      else if (action === 'sync')
        await ok(
          api().POST('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}/sync', {
            params: { path },
          }),
        );
      else
        await ok(
          api().POST('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}/disconnect', {
            params: { path },
          }),
        );
    },
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: key });
      void queries.invalidateQueries({ queryKey: ['integration-jobs', workspace_id, integration_id] });
    },
  });
  if (integration.isPending) return <Loading />;
  if (integration.isError)
    return <ErrorState error={integration.error} retry={() => void integration.refetch()} />;
  const i = integration.data;
  const busy = act.isPending || i.active_job_id !== null;
  return (
    <section>
      <PageHeader title={i.name}>
        {canWrite && i.status !== 'connected' && (
          <button type="button" class="primary" onClick={() => act.mutate('connect')} disabled={busy}>
            Connect
          </button>
        )}
        {canWrite && i.status === 'connected' && (
          <button type="button" class="primary" onClick={() => act.mutate('sync')} disabled={busy}>
            Sync now
          </button>
        )}
        {canWrite && i.status === 'connected' && (
          <button
            type="button"
            class="danger"
            onClick={() => act.mutate('disconnect')}
            disabled={act.isPending}
          >
            Disconnect
          </button>
        )}
      </PageHeader>
      <FormError error={act.error} />
      <dl class="facts">
        <dt>CRM</dt>
        <dd>{i.provider}</dd>
        <dt>Status</dt>
        <dd>
          <span class={`badge ${i.status}`} role="status" aria-label="Integration status">
            {i.status}
          </span>
        </dd>
        <dt>Listings</dt>
        <dd>
          {i.knowledge_base_id ? (
            <a href={`/knowledge/${i.knowledge_base_id}`}>Listings knowledge base</a>
          ) : (
            '—'
          )}
        </dd>
        <dt>Last sync</dt>
        <dd>{i.last_sync ? `${i.last_sync.status} ${when(i.last_sync.completed_at)}` : '—'}</dd>
      </dl>
      {i.active_job_id && <ActiveJob integration_id={i.id} job_id={i.active_job_id} />}
      <h2>Sync jobs</h2>
      <PagedTable
        caption="Sync jobs"
        // Asked again whenever the integration shows a job started or ended (its polling sees that first).
        queryKey={[
          'integration-jobs',
          workspace_id,
          integration_id,
          i.active_job_id,
          i.last_sync?.job_id,
          i.last_sync?.status,
        ]}
        rowKey={(job) => job.id}
        empty="No syncs yet."
        refetchInterval={i.active_job_id ? 1000 : false}
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}/jobs', {
              params: { path: { workspace_id, integration_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Started', render: (job) => when(job.created_at) },
          { label: 'Trigger', render: (job) => `${job.trigger} (${job.kind})` },
          { label: 'Status', render: (job) => <span class={`badge ${job.status}`}>{job.status}</span> },
          { label: 'Progress', render: (job) => `${job.progress.done} / ${job.progress.total}` },
          {
            label: 'Outcome',
            render: (job) =>
              job.failure_reason ??
              `${job.counts.listings} listings (${job.counts.listings_created} new), ${job.counts.contacts} contacts ` +
                `(${job.counts.contacts_created} new, ${job.counts.contacts_merged} merged, ${job.counts.rejected} rejected)`,
          },
          { label: 'Finished', render: (job) => when(job.completed_at) },
        ]}
      />
    </section>
  );
}
