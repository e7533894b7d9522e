import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { agentQueries } from '../api/queries/agents';
import { Field, FormError, FormActions, ListPage } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

function NewAgentForm({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [prompt, setPrompt] = useState('');
  const [greeting, setGreeting] = useState('');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents', {
          params: { path: { workspace_id } },
          body: { name, prompt, greeting },
        }),
      ),
    onSuccess: (agent) => {
      void queries.invalidateQueries({ queryKey: agentQueries.lists(workspace_id) });
      onDone();
      route(`/agents/${agent.id}`);
    },
  });
  return (
    <form
      class="card"
      aria-label="New agent"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate();
      }}
    >
      <Field label="Name" name="name" error={create.error}>
        {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
      </Field>
      <Field
        label="Prompt"
        name="prompt"
        error={create.error}
        hint="Use {{parameter}} for values given per call."
      >
        {(p) => <textarea {...p} rows={5} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />}
      </Field>
      <Field label="Greeting" name="greeting" error={create.error}>
        {(p) => <input {...p} value={greeting} onInput={(e) => setGreeting(e.currentTarget.value)} />}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Create agent" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

export default function Agents() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  return (
    <ListPage
      title="Agents"
      newLabel="New agent"
      canWrite={canWrite}
      form={(close) => <NewAgentForm onDone={close} />}
      caption="Agents"
      {...agentQueries.list(workspace_id)}
      rowKey={(agent) => agent.id}
      empty="No agents yet."
      columns={[
        { label: 'Name', render: (agent) => <a href={`/agents/${agent.id}`}>{agent.name}</a> },
        { label: 'Number', render: (agent) => agent.phone_number ?? '—' },
        {
          label: 'Answering calls',
          render: (agent) =>
            agent.suspended_by_billing ? 'Suspended' : agent.answering_calls ? 'On' : 'Off',
        },
      ]}
    />
  );
}
