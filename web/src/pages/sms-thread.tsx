import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { contactQueries } from '../api/queries/contacts';
import { Field, FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

/** One contact's SMS thread, both directions, newest first, with a reply box. */
export default function SmsThread() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const contact_id = useRoute().params.contact_id;
  const queries = useQueryClient();
  const [body, setBody] = useState('');
  const contact = useQuery(contactQueries.detail(workspace_id, contact_id));
  const reply = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/sms-inbox/{contact_id}', {
          params: { path: { workspace_id, contact_id } },
          body: { body },
        }),
      ),
    onSuccess: () => {
      setBody('');
      void queries.invalidateQueries({ queryKey: ['sms-thread', workspace_id, contact_id] });
    },
  });
  const c = contact.data;
  const who = c ? `${c.first_name} ${c.last_name}`.trim() || c.phone || c.id : contact_id;
  return (
    <section>
      <PageHeader title={`SMS with ${who}`} />
      <p>
        <a href="/sms">Back to the inbox</a>
        {c && (
          <>
            {' · '}
            <a href={`/contacts/${c.id}`}>Contact</a>
            {c.contactability !== 'contactable' && ` · ${c.contactability}`}
          </>
        )}
      </p>
      {canWrite && (
        <form
          class="card"
          aria-label="Reply in this thread"
          onSubmit={(e) => {
            e.preventDefault();
            reply.mutate();
          }}
        >
          <Field label="Reply" name="body" error={reply.error}>
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
          <FormError error={reply.error} />
          <button type="submit" class="primary" disabled={reply.isPending}>
            Send reply
          </button>
        </form>
      )}
      <PagedTable
        caption="Messages"
        queryKey={['sms-thread', workspace_id, contact_id]}
        rowKey={(m) => m.id}
        empty="No messages in this thread."
        refetchInterval={3000}
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/sms-inbox/{contact_id}', {
              params: { path: { workspace_id, contact_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'From', render: (m) => (m.direction === 'inbound' ? 'Contact' : 'Us') },
          { label: 'Message', render: (m) => <span class={`sms ${m.direction}`}>{m.body}</span> },
          {
            label: 'Status',
            render: (m) => `${m.status}${m.failure_reason ? `: ${m.failure_reason}` : ''}`,
          },
          { label: 'When', render: (m) => when(m.created_at) },
        ]}
      />
    </section>
  );
}
