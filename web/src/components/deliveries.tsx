import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { FormError, PagedTable, when } from './ui';
import { useSession, useWorkspaceId } from '../session';

/** The last attempt's HTTP status, or its error when there was no answer. */
export function lastResponse(attempts: { status_code: number | null; error: string | null }[]): string {
  const last = attempts[attempts.length - 1];
  if (!last) return '—';
  return last.status_code !== null ? `HTTP ${last.status_code}` : (last.error ?? 'no answer');
}

/**
 * Webhook deliveries (the post-call webhook's and the webhook endpoints'), newest first, paged, with
 * each one's state, attempts and last response, and Resend for those who may write. `filter` narrows
 * them to one call or one endpoint.
 */
export function DeliveriesTable(props: {
  filter: { call_id?: string; endpoint_id?: string };
  caption: string;
  empty: string;
  /** Ask again every few seconds (a page where new deliveries are expected). */
  live?: boolean;
}) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
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
    <>
      <FormError error={resend.error} />
      <PagedTable
        caption={props.caption}
        queryKey={['webhook-deliveries', workspace_id, props.filter]}
        rowKey={(d) => d.id}
        empty={props.empty}
        refetchInterval={props.live ? 3_000 : false}
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/webhook-deliveries', {
              params: { path: { workspace_id }, query: { cursor, ...props.filter } },
            }),
          )
        }
        columns={[
          { label: 'Event', render: (d) => d.event_type },
          { label: 'URL', render: (d) => d.url },
          { label: 'State', render: (d) => d.state },
          { label: 'Attempts', render: (d) => d.attempts.length },
          { label: 'Response', render: (d) => lastResponse(d.attempts) },
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
    </>
  );
}
