import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { ErrorState, FormError, Loading, PageHeader, StatusButtons, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Status = 'sending' | 'cancelled';

export default function SmsCampaign() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const campaign_id = useRoute().params.id;
  const queries = useQueryClient();
  const key = ['sms-campaign', workspace_id, campaign_id];
  const campaign = useQuery({
    queryKey: key,
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/sms-campaigns/{campaign_id}', {
          params: { path: { workspace_id, campaign_id } },
        }),
      ),
    refetchInterval: (query) => (query.state.data?.status === 'sending' ? 1000 : 5000),
  });
  const change = useMutation({
    mutationFn: (status: Status) =>
      ok(
        api().PATCH('/api/v1/workspaces/{workspace_id}/sms-campaigns/{campaign_id}', {
          params: { path: { workspace_id, campaign_id } },
          body: { status },
        }),
      ),
    onSuccess: (saved) => {
      queries.setQueryData(key, saved);
      void queries.invalidateQueries({ queryKey: ['sms-campaigns', workspace_id] });
    },
  });
  if (campaign.isPending) return <Loading />;
  if (campaign.isError) return <ErrorState error={campaign.error} retry={() => void campaign.refetch()} />;
  const c = campaign.data;
  const percent =
    c.status === 'sent'
      ? 100
      : c.progress.total > 0
        ? Math.floor((c.progress.done / c.progress.total) * 100)
        : 0;
  const audience = c.audience.all
    ? 'every contactable contact'
    : c.audience.tag
      ? `contacts tagged ${c.audience.tag}`
      : `${c.audience.contact_ids?.length ?? 0} chosen contacts`;
  return (
    <section>
      <PageHeader title={c.name}>
        {canWrite && (
          <StatusButtons
            pending={change.isPending}
            onChange={(to) => change.mutate(to)}
            actions={[
              { label: 'Start sending', to: 'sending', shown: c.status === 'draft', kind: 'primary' },
              {
                label: 'Cancel campaign',
                to: 'cancelled',
                shown: c.status === 'draft' || c.status === 'sending',
                kind: 'danger',
              },
            ]}
          />
        )}
      </PageHeader>
      <FormError error={change.error} />
      <p>
        Status:{' '}
        <span class={`badge ${c.status}`} role="status" aria-label="SMS campaign status">
          {c.status}
        </span>{' '}
        · to {audience} · <a href="/sms">All SMS</a>
      </p>
      <label>
        Sending progress
        <progress max={100} value={percent} aria-valuetext={`${percent} %`} />
      </label>
      <blockquote class="card">{c.body}</blockquote>
      <dl class="facts">
        <dt>Recipients</dt>
        <dd>{c.recipients}</dd>
        <dt>Sent</dt>
        <dd>{c.sent}</dd>
        <dt>Delivered</dt>
        <dd>{c.delivered}</dd>
        <dt>Failed</dt>
        <dd>{c.failed}</dd>
        <dt>Skipped</dt>
        <dd>{c.skipped}</dd>
        <dt>Replies</dt>
        <dd>{c.replies}</dd>
        <dt>Opt-outs</dt>
        <dd>{c.opt_outs}</dd>
        <dt>Credits</dt>
        <dd>{c.credits}</dd>
        <dt>Started</dt>
        <dd>{when(c.started_at)}</dd>
        <dt>Finished</dt>
        <dd>{when(c.completed_at)}</dd>
      </dl>
    </section>
  );
}
