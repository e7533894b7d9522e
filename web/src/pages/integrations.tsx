import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

export default function Integrations() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const sync = useMutation({
    mutationFn: (integration_id: string) =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/integrations/{integration_id}/sync', {
          params: { path: { workspace_id, integration_id } },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['integrations', workspace_id] }),
  });
  return (
    <section>
      <PageHeader title="Integrations" />
      <FormError error={sync.error} />
      <PagedTable
        caption="Integrations"
        queryKey={['integrations', workspace_id]}
        rowKey={(i) => i.id}
        empty="No integrations yet: connect your CRM through the API (POST …/integrations)."
        refetchInterval={5000}
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/integrations', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Name', render: (i) => i.name },
          { label: 'Provider', render: (i) => i.provider },
          { label: 'Status', render: (i) => i.status },
          {
            label: 'Last sync',
            render: (i) => (i.last_sync ? `${i.last_sync.status} ${when(i.last_sync.completed_at)}` : '—'),
          },
          {
            label: 'Actions',
            render: (i) =>
              canWrite && i.status === 'connected' ? (
                <button
                  type="button"
                  onClick={() => sync.mutate(i.id)}
                  disabled={sync.isPending || Boolean(i.active_job_id)}
                >
                  Sync now
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}
