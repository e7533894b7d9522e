import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { Field, FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

export default function Sms() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [to, setTo] = useState('');
  const [body, setBody] = useState('');
  const send = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/sms', {
          params: { path: { workspace_id } },
          body: { to_phone: to, body },
        }),
      ),
    onSuccess: () => {
      setBody('');
      void queries.invalidateQueries({ queryKey: ['sms-inbox', workspace_id] });
    },
  });
  return (
    <section>
      <PageHeader title="SMS" />
      {canWrite && (
        <form
          class="card"
          aria-label="Send an SMS"
          onSubmit={(e) => {
            e.preventDefault();
            send.mutate();
          }}
        >
          <Field label="To phone" name="to_phone" error={send.error}>
            {(p) => (
              <input {...p} type="tel" value={to} onInput={(e) => setTo(e.currentTarget.value)} required />
            )}
          </Field>
          <Field label="Message" name="body" error={send.error}>
            {(p) => (
              <textarea
                {...p}
                rows={3}
                value={body}
                onInput={(e) => setBody(e.currentTarget.value)}
                required
              />
            )}
          </Field>
          <FormError error={send.error} />
          {send.isSuccess && <p role="status">Sent.</p>}
          <button type="submit" class="primary" disabled={send.isPending}>
            Send
          </button>
        </form>
      )}
      <h2>Inbox</h2>
      <PagedTable
        caption="SMS threads"
        queryKey={['sms-inbox', workspace_id]}
        rowKey={(t) => t.id}
        empty="No conversations yet."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/sms-inbox', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Phone', render: (t) => t.phone },
          { label: 'Last message', render: (t) => t.last_message },
          { label: 'When', render: (t) => when(t.last_message_at) },
          { label: 'Unread', render: (t) => (t.unread ? 'Yes' : '') },
        ]}
      />
      <h2>SMS campaigns</h2>
      <PagedTable
        caption="SMS campaigns"
        queryKey={['sms-campaigns', workspace_id]}
        rowKey={(c) => c.id}
        empty="No SMS campaigns yet."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/sms-campaigns', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Name', render: (c) => c.name },
          { label: 'Status', render: (c) => c.status },
          { label: 'Sent', render: (c) => c.sent },
          { label: 'Replies', render: (c) => c.replies },
        ]}
      />
    </section>
  );
}
