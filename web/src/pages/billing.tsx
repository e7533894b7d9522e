import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { ErrorState, Field, FormError, Loading, PageHeader, PagedTable, when } from '../components/ui';
import { useSession } from '../session';

const PAID_PLANS = ['starter', 'growth', 'scale'] as const;
type PaidPlan = (typeof PAID_PLANS)[number];

const number = new Intl.NumberFormat('en-AU', { maximumFractionDigits: 2 });

/**
 * What a ledger entry charged, linked: its source holds the id of the call (`call_…`) or the SMS
 * (`sms_…`); anything else (a grant, a purchase, an evaluation) is shown as it is.
 */
function SourceLink({ source }: { source: string }) {
  const call = /\bcall_[0-9A-Za-z]+/.exec(source)?.[0];
  if (call) return <CallName callId={call} />;
  const sms = /\bsms_[0-9A-Za-z]+/.exec(source)?.[0];
  if (sms) return <a href={`/sms/messages/${sms}`}>SMS {sms}</a>;
  return <span class="wrap">{source}</span>;
}

/**
 * A charged call by who was on the other end and when ("Call to +61… · 7 Dec 2026, 2:10 pm"), linked
 * to its page; a call of another workspace (the ledger is the organisation's) is named by its id.
 */
function CallName({ callId }: { callId: string }) {
  const { workspace } = useSession();
  const call = useQuery({
    queryKey: ['ledger-call', workspace?.id, callId],
    enabled: workspace !== undefined,
    retry: false,
    staleTime: Infinity,
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/calls/{call_id}', {
          params: { path: { workspace_id: workspace?.id ?? '', call_id: callId } },
        }),
      ),
  });
  const c = call.data;
  if (!c) return <a href={`/calls/${callId}`}>Call {callId}</a>;
  const who =
    c.channel === 'web'
      ? `Test chat with ${c.agent_name}`
      : `${c.direction === 'inbound' ? 'Call from' : 'Call to'} ${c.remote_phone ?? c.to_phone}`;
  return (
    <a href={`/calls/${callId}`}>
      {who} · {when(c.created_at)}
    </a>
  );
}

/** A ledger line's reason without the raw ids the "For" column names. */
const reasonText = (reason: string): string =>
  reason.replace(/\s*\b(call|sms)_[0-9A-Za-z]+/g, '').trim() || reason;

/** The provider's hosted page (checkout) when it asks for one; else the page says what was asked. */
const goTo = (url: string | null | undefined): boolean => {
  if (!url) return false;
  location.assign(url);
  return true;
};

/** The owner's actions: change plan, cancel, buy credits (each confirmed by the payment provider). */
function OwnerActions({ organisation_id, plan }: { organisation_id: string; plan: string }) {
  const queries = useQueryClient();
  // Starts on the current plan (the first paid plan on Free): nothing changes until another is chosen.
  const [wanted, setWanted] = useState<PaidPlan>(PAID_PLANS.find((p) => p === plan) ?? PAID_PLANS[0]);
  const [quantity, setQuantity] = useState('1000');
  const [said, setSaid] = useState<string>();
  const refresh = () => queries.invalidateQueries({ queryKey: ['billing', organisation_id] });
  const path = { params: { path: { organisation_id } } };
  const changePlan = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/organisations/{organisation_id}/billing/subscription', {
          ...path,
          body: { plan: wanted, return_url: location.href },
        }),
      ),
    onSuccess: (subscription) => {
      if (goTo(subscription.checkout_url)) return;
      setSaid(`Plan change to ${wanted} requested: it takes effect when the payment provider confirms it.`);
      void refresh();
    },
  });
  const cancel = useMutation({
    mutationFn: () => ok(api().DELETE('/api/v1/organisations/{organisation_id}/billing/subscription', path)),
    onSuccess: () => {
      setSaid('Cancellation requested: the organisation goes back to Free when the provider confirms it.');
      void refresh();
    },
  });
  const buy = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/organisations/{organisation_id}/billing/credits', {
          ...path,
          body: { quantity: Number(quantity), return_url: location.href },
        }),
      ),
    onSuccess: (purchase) => void goTo(purchase.checkout_url),
  });
  return (
    <div class="card">
      <h2>Plan and credits</h2>
      {said && <p role="status">{said}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          changePlan.mutate();
        }}
      >
        <Field label="New plan" name="plan" error={changePlan.error}>
          {(props) => (
            <select {...props} value={wanted} onChange={(e) => setWanted(e.currentTarget.value as PaidPlan)}>
              {PAID_PLANS.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          )}
        </Field>
        <FormError error={changePlan.error} />
        <button type="submit" disabled={changePlan.isPending || wanted === plan}>
          Change plan
        </button>
      </form>
      {plan !== 'free' && (
        <p>
          <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
            Cancel subscription
          </button>
          <FormError error={cancel.error} />
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          buy.mutate();
        }}
      >
        <Field
          label="Credits to buy"
          name="quantity"
          error={buy.error}
          hint="At least 100; 0.01 AUD each, granted once the payment is confirmed."
        >
          {(props) => (
            <input
              {...props}
              type="number"
              inputMode="numeric"
              value={quantity}
              onInput={(e) => setQuantity(e.currentTarget.value)}
            />
          )}
        </Field>
        <FormError error={buy.error} />
        <button type="submit" disabled={buy.isPending}>
          Buy credits
        </button>
      </form>
    </div>
  );
}

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
          <dd>{number.format(billing.data.credit_balance)}</dd>
          <dt>Included credits a month</dt>
          <dd>{number.format(billing.data.plan_details.included_credits)}</dd>
        </dl>
      )}
      {isOwner && billing.data && <OwnerActions organisation_id={organisation_id} plan={billing.data.plan} />}
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
          { label: 'Credits', render: (entry) => number.format(entry.credits) },
          { label: 'Reason', render: (entry) => reasonText(entry.reason) },
          { label: 'For', render: (entry) => <SourceLink source={entry.source} /> },
        ]}
      />
    </section>
  );
}
