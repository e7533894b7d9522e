import { useQuery } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { ErrorState, Loading, PageHeader, PagedTable, when } from '../components/ui';
import { useSession } from '../session';

export default function Billing() {
  const { organisation, isOwner } = useSession();
  const organisation_id = organisation.organisation_id;
  const billing = useQuery({
    queryKey: ['billing', organisation_id],
    queryFn: () =>
      ok(
        api().GET('/api/v1/organisations/{organisation_id}/billing', {
          params: { path: { organisation_id } },
        }),
      ),
  });
  const portal = async () => {
    const session = await ok(
      api().POST('/api/v1/organisations/{organisation_id}/billing/portal-session', {
        params: { path: { organisation_id } },
        body: { return_url: location.href },
      }),
    );
    const url = (session as { url?: string }).url;
    if (url) location.assign(url);
  };
  return (
    <section>
      <PageHeader title="Billing">
        {isOwner && (
          <button type="button" onClick={() => void portal()}>
            Manage subscription
          </button>
        )}
      </PageHeader>
      {billing.isPending && <Loading />}
      {billing.isError && <ErrorState error={billing.error} retry={() => void billing.refetch()} />}
      {billing.data && (
        <dl class="facts">
          <dt>Plan</dt>
          <dd>{billing.data.plan_details.name}</dd>
          <dt>Status</dt>
          <dd>{billing.data.status}</dd>
          <dt>Credits</dt>
          <dd>{billing.data.credit_balance}</dd>
          <dt>Included credits a month</dt>
          <dd>{billing.data.plan_details.included_credits}</dd>
        </dl>
      )}
      <h2>Ledger</h2>
      <PagedTable
        caption="Credit ledger"
        queryKey={['ledger', organisation_id]}
        rowKey={(entry) => entry.id}
        empty="No ledger entries."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/organisations/{organisation_id}/billing/ledger', {
              params: { path: { organisation_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'When', render: (entry) => when(entry.created_at) },
          { label: 'Kind', render: (entry) => entry.kind },
          { label: 'Credits', render: (entry) => entry.credits },
          { label: 'Reason', render: (entry) => entry.reason },
        ]}
      />
    </section>
  );
}
