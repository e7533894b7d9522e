import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { Field, FormActions, FormError, ListPage, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Provider = 'demo_crm' | 'hubspot';

function NewIntegration({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const [provider, setProvider] = useState<Provider>('demo_crm');
  const [name, setName] = useState('');
  const [account, setAccount] = useState('');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/integrations', {
          params: { path: { workspace_id } },
          body: { provider, name, config: account ? { account } : {} },
        }),
      ),
    onSuccess: (integration) => {
      void queries.invalidateQueries({ queryKey: ['integrations', workspace_id] });
      onDone();
      route(`/integrations/${integration.id}`);
    },
  });
  return (
    <form
      class="card grid"
      aria-label="New integration"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Field label="CRM" name="provider" error={create.error}>
        {(p) => (
          <select {...p} value={provider} onChange={(e) => setProvider(e.currentTarget.value as Provider)}>
            <option value="demo_crm">Demo CRM</option>
            <option value="hubspot">HubSpot</option>
          </select>
        )}
      </Field>
      <Field
        label="Integration name"
        name="name"
        error={create.error}
        hint="Labels the contacts it brings and its listings."
      >
        {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
      </Field>
      <Field
        label="Account"
        name="config.account"
        error={create.error}
        hint={
          provider === 'demo_crm' ? 'Optional (default: demo).' : 'The key of its token in the crm secret.'
        }
      >
        {(p) => <input {...p} value={account} onInput={(e) => setAccount(e.currentTarget.value)} />}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Create integration" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

export default function Integrations() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  return (
    <ListPage
      title="Integrations"
      newLabel="New integration"
      canWrite={canWrite}
      form={(close) => <NewIntegration onDone={close} />}
      caption="Integrations"
      queryKey={['integrations', workspace_id]}
      rowKey={(i) => i.id}
      empty="No integrations yet."
      refetchInterval={5000}
      fetchPage={(cursor?: string) =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/integrations', {
            params: { path: { workspace_id }, query: { cursor } },
          }),
        )
      }
      columns={[
        { label: 'Name', render: (i) => <a href={`/integrations/${i.id}`}>{i.name}</a> },
        { label: 'CRM', render: (i) => i.provider },
        { label: 'Status', render: (i) => <span class={`badge ${i.status}`}>{i.status}</span> },
        {
          label: 'Last sync',
          render: (i) =>
            i.active_job_id
              ? 'syncing…'
              : i.last_sync
                ? `${i.last_sync.status} ${when(i.last_sync.completed_at)}`
                : '—',
        },
      ]}
    />
  );
}
