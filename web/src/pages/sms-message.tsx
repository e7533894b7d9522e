import { useQuery } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { ErrorState, Loading, PageHeader, when } from '../components/ui';
import { useWorkspaceId } from '../session';

/** One SMS (a ledger entry links here): who, what, its segments and credits, and its thread. */
export default function SmsMessage() {
  const workspace_id = useWorkspaceId();
  const message_id = useRoute().params.id;
  const message = useQuery({
    queryKey: ['sms-message', workspace_id, message_id],
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/sms/{message_id}', {
          params: { path: { workspace_id, message_id } },
        }),
      ),
  });
  const m = message.data;
  return (
    <section>
      <PageHeader
        title={
          m
            ? `SMS ${m.direction === 'inbound' ? 'from' : 'to'} ${m.direction === 'inbound' ? m.from_phone : m.to_phone}`
            : 'SMS'
        }
      />
      {message.isPending && <Loading />}
      {message.isError && <ErrorState error={message.error} retry={() => void message.refetch()} />}
      {m && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{m.status}</dd>
            <dt>From</dt>
            <dd>{m.from_phone}</dd>
            <dt>To</dt>
            <dd>{m.to_phone}</dd>
            <dt>Sent</dt>
            <dd>{when(m.sent_at ?? m.created_at)}</dd>
            <dt>Segments</dt>
            <dd>
              {m.segments} ({m.encoding})
            </dd>
            <dt>Credits</dt>
            <dd>{m.credits}</dd>
          </dl>
          <p class="wrap">{m.body}</p>
          <p>
            <a href={`/sms/threads/${m.contact_id}`}>The conversation with this contact</a>
          </p>
        </>
      )}
    </section>
  );
}
