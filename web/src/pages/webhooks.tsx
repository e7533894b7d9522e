import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { Field, FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

export default function Webhooks() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [url, setUrl] = useState('');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/webhook-endpoints', {
          params: { path: { workspace_id } },
          body: { url, event_types: ['call.ended'] },
        }),
      ),
    onSuccess: () => {
      setUrl('');
      void queries.invalidateQueries({ queryKey: ['webhook-endpoints', workspace_id] });
    },
  });
  const resend = useMutation({
    mutationFn: (delivery_id: string) =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/webhook-deliveries/{delivery_id}/resend', {
          params: { path: { workspace_id, delivery_id } },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['webhook-deliveries', workspace_id] }),
  });
  return (
    <section>
      <PageHeader title="Webhooks" />
      {canWrite && (
        <form
          class="card row"
          aria-label="New webhook endpoint"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Field label="Endpoint URL" name="url" error={create.error}>
            {(p) => (
              <input {...p} type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required />
            )}
          </Field>
          <button type="submit" class="primary" disabled={create.isPending}>
            Add endpoint
          </button>
          <FormError error={create.error} />
        </form>
      )}
      <PagedTable
        caption="Webhook endpoints"
        queryKey={['webhook-endpoints', workspace_id]}
        rowKey={(e) => e.id}
        empty="No webhook endpoints yet."
        fetchPage={async () =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/webhook-endpoints', {
              params: { path: { workspace_id } },
            }),
          )
        }
        columns={[
          { label: 'URL', render: (e) => e.url },
          { label: 'Events', render: (e) => e.event_types.join(', ') },
          { label: 'Enabled', render: (e) => (e.enabled ? 'Yes' : 'No') },
        ]}
      />
      <h2>Deliveries</h2>
      <FormError error={resend.error} />
      <PagedTable
        caption="Webhook deliveries"
        queryKey={['webhook-deliveries', workspace_id]}
        rowKey={(d) => d.id}
        empty="No deliveries yet."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/webhook-deliveries', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Event', render: (d) => d.event_type },
          { label: 'URL', render: (d) => d.url },
          { label: 'State', render: (d) => d.state },
          { label: 'Last attempt', render: (d) => when(d.attempts[d.attempts.length - 1]?.at) },
          {
            label: 'Actions',
            render: (d) =>
              canWrite ? (
                <button type="button" onClick={() => resend.mutate(d.id)} disabled={resend.isPending}>
                  Resend
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}
