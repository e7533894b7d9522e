import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { api, ApiError, ok } from '../api/client';
import type { operations } from '../api/schema';
import { DeliveriesTable } from '../components/deliveries';
import {
  Empty,
  ErrorState,
  Field,
  FormActions,
  FormError,
  ListPageHeader,
  Loading,
  when,
} from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type EventType = NonNullable<
  operations['createWebhookEndpoint']['requestBody']
>['content']['application/json']['event_types'][number];
type Endpoint = Awaited<ReturnType<typeof loadEndpoints>>['items'][number];

/** The workspace events an endpoint can subscribe to (docs/webhooks.md). */
const EVENT_TYPES: [EventType, string][] = [
  ['call.ended', 'A call ended'],
  ['listing.sold', 'A listing sold'],
  ['sms.received', 'An SMS came in'],
  ['contact.created', 'A contact was created'],
  ['campaign.completed', 'A campaign completed'],
  ['workflow.completed', 'A workflow run completed'],
];

/** Every endpoint of the workspace: at most 20, one page (the API's `next_cursor` is always null). */
const loadEndpoints = (workspace_id: string) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/webhook-endpoints', {
      params: { path: { workspace_id } },
    }),
  );

function EventChoices(props: {
  selected: EventType[];
  onChange: (types: EventType[]) => void;
  error: unknown;
}) {
  const messages = props.error instanceof ApiError ? props.error.fieldMessages('event_types') : [];
  return (
    <fieldset>
      <legend>Events</legend>
      {EVENT_TYPES.map(([type, label]) => (
        <label class="check" key={type}>
          <input
            type="checkbox"
            checked={props.selected.includes(type)}
            onChange={(e) =>
              props.onChange(
                e.currentTarget.checked
                  ? [...props.selected, type]
                  : props.selected.filter((t) => t !== type),
              )
            }
          />{' '}
          {label} <code>{type}</code>
        </label>
      ))}
      {messages.length > 0 && <small class="field-error">{messages.join(' ')}</small>}
    </fieldset>
  );
}

/** The form that adds an endpoint, or changes one (`endpoint`). */
function EndpointForm(props: { endpoint?: Endpoint; onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const [url, setUrl] = useState(props.endpoint?.url ?? '');
  const [events, setEvents] = useState<EventType[]>(props.endpoint?.event_types ?? ['call.ended']);
  const [enabled, setEnabled] = useState(props.endpoint?.enabled ?? true);
  const save = useMutation({
    mutationFn: () => {
      const body = { url: url.trim(), event_types: events, enabled };
      return props.endpoint
        ? ok(
            api().PATCH('/api/v1/workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}', {
              params: { path: { workspace_id, endpoint_id: props.endpoint.id } },
              body,
            }),
          )
        : ok(
            api().POST('/api/v1/workspaces/{workspace_id}/webhook-endpoints', {
              params: { path: { workspace_id } },
              body,
            }),
          );
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['webhook-endpoints', workspace_id] });
      props.onDone();
    },
  });
  const editing = props.endpoint !== undefined;
  return (
    <form
      class="card"
      aria-label={editing ? `Edit endpoint ${props.endpoint!.url}` : 'New webhook endpoint'}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Field label="Endpoint URL" name="url" error={save.error}>
        {(p) => (
          <input {...p} type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required />
        )}
      </Field>
      <EventChoices selected={events} onChange={setEvents} error={save.error} />
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />{' '}
        Enabled
      </label>
      <FormError error={save.error} />
      <FormActions
        submit={editing ? 'Save endpoint' : 'Add endpoint'}
        pending={save.isPending}
        onCancel={props.onDone}
      />
    </form>
  );
}

function EndpointCard({ endpoint }: { endpoint: Endpoint }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [showDeliveries, setShowDeliveries] = useState(false);
  const remove = useMutation({
    mutationFn: () =>
      ok(
        api().DELETE('/api/v1/workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}', {
          params: { path: { workspace_id, endpoint_id: endpoint.id } },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['webhook-endpoints', workspace_id] }),
  });
  if (editing) return <EndpointForm endpoint={endpoint} onDone={() => setEditing(false)} />;
  return (
    <li class="card" aria-label={`Endpoint ${endpoint.url}`}>
      <div class="row">
        <strong class="wrap">{endpoint.url}</strong>
        <span class={`badge ${endpoint.enabled ? 'completed' : 'cancelled'}`}>
          {endpoint.enabled ? 'enabled' : 'disabled'}
        </span>
      </div>
      <p class="muted">
        {endpoint.event_types.join(', ')} · since {when(endpoint.created_at)}
      </p>
      <div class="buttons">
        <button
          type="button"
          aria-expanded={showDeliveries}
          onClick={() => setShowDeliveries(!showDeliveries)}
        >
          {showDeliveries ? 'Hide deliveries' : 'Show deliveries'}
        </button>
        {canWrite && (
          <>
            <button type="button" aria-label={`Edit ${endpoint.url}`} onClick={() => setEditing(true)}>
              Edit
            </button>
            <button
              type="button"
              class="danger"
              aria-label={`Delete ${endpoint.url}`}
              disabled={remove.isPending}
              onClick={() => {
                if (confirm(`Delete the endpoint ${endpoint.url}? It gets no more events.`)) remove.mutate();
              }}
            >
              Delete
            </button>
          </>
        )}
      </div>
      <FormError error={remove.error} />
      {showDeliveries && (
        <DeliveriesTable
          filter={{ endpoint_id: endpoint.id }}
          caption={`Deliveries to ${endpoint.url}`}
          empty="No deliveries to this endpoint yet."
          live
        />
      )}
    </li>
  );
}

/** The workspace's signing secret (Standard Webhooks): shown on request, rotated with a confirmation. */
function SigningSecret() {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const [shown, setShown] = useState(false);
  const secret = useQuery({
    queryKey: ['webhook-secret', workspace_id],
    enabled: shown,
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/webhook-secret', { params: { path: { workspace_id } } }),
      ),
  });
  const rotate = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/webhook-secret', {
          params: { path: { workspace_id } },
        }),
      ),
    onSuccess: (rotated) => {
      queries.setQueryData(['webhook-secret', workspace_id], rotated);
      setShown(true);
    },
  });
  return (
    <section class="card" aria-label="Signing secret">
      <h2>Signing secret</h2>
      <p class="muted">Every delivery is signed with it (Standard Webhooks).</p>
      {shown && secret.isPending && <Loading what="Loading the secret…" />}
      {shown && secret.isError && <ErrorState error={secret.error} retry={() => void secret.refetch()} />}
      {shown && secret.data && (
        <>
          <Field label="Webhook signing secret" name="secret">
            {(p) => <input {...p} class="secret" readOnly value={secret.data.secret} />}
          </Field>
          {secret.data.previous_secret_expires_at && (
            <p class="muted">
              The previous secret also signs until {when(secret.data.previous_secret_expires_at)}.
            </p>
          )}
        </>
      )}
      <div class="buttons">
        <button type="button" onClick={() => setShown(!shown)}>
          {shown ? 'Hide secret' : 'Show secret'}
        </button>
        <button
          type="button"
          disabled={rotate.isPending}
          onClick={() => {
            if (confirm('Rotate the signing secret? The old one keeps signing for 24 hours.'))
              rotate.mutate();
          }}
        >
          Rotate secret
        </button>
      </div>
      <FormError error={rotate.error} />
    </section>
  );
}

export default function Webhooks() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const [adding, setAdding] = useState(false);
  const endpoints = useQuery({
    queryKey: ['webhook-endpoints', workspace_id],
    queryFn: () => loadEndpoints(workspace_id),
  });
  return (
    <section>
      <ListPageHeader
        title="Webhooks"
        newLabel="New endpoint"
        canWrite={canWrite}
        creating={adding}
        onNew={() => setAdding(true)}
      />
      {adding && <EndpointForm onDone={() => setAdding(false)} />}
      <p class="webhooks-source">
        Endpoints here receive workspace events (a listing sold, a campaign completed, a workflow completed,
        an SMS received…). Post-call deliveries do not come from here: the post-call webhook is one of an
        agent&apos;s post-call actions (on the agent&apos;s page under Post-call actions; see{' '}
        <a href="/agents">Agents</a>), sent when each of that agent&apos;s calls ends. Both are signed with
        this workspace&apos;s secret and logged the same way: every delivery is listed under All deliveries
        below (post-call ones as <code>call.ended</code>).
      </p>
      <h2>Endpoints</h2>
      {endpoints.isPending && <Loading />}
      {endpoints.isError && <ErrorState error={endpoints.error} retry={() => void endpoints.refetch()} />}
      {endpoints.data?.items.length === 0 && <Empty>No webhook endpoints yet.</Empty>}
      {endpoints.data && endpoints.data.items.length > 0 && (
        <ul class="plain" aria-label="Webhook endpoints">
          {endpoints.data.items.map((endpoint) => (
            <EndpointCard key={endpoint.id} endpoint={endpoint} />
          ))}
        </ul>
      )}
      {canWrite && <SigningSecret />}
      <h2>All deliveries</h2>
      <DeliveriesTable filter={{}} caption="Webhook deliveries" empty="No deliveries yet." live />
    </section>
  );
}
