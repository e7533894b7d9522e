import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { Field, FormError, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

const SCOPES = [
  'start_call',
  'calls:read',
  'agents:read',
  'agents:write',
  'contacts:read',
  'contacts:write',
] as const;

/** A new or rotated key's secret: shown this once, never again. */
function ShownOnce({ secret, onDismiss }: { secret: string; onDismiss: () => void }) {
  return (
    <div class="card notice" role="status">
      <p>Copy this key now: it is shown only once.</p>
      <p>
        <code class="secret" aria-label="API key secret">
          {secret}
        </code>
      </p>
      <button type="button" onClick={() => void navigator.clipboard?.writeText(secret)}>
        Copy key
      </button>{' '}
      <button type="button" onClick={onDismiss}>
        Done
      </button>
    </div>
  );
}

export default function ApiKeys() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['start_call', 'calls:read']);
  const [secret, setSecret] = useState<string>();
  const refresh = () => queries.invalidateQueries({ queryKey: ['api-keys', workspace_id] });
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/api-keys', {
          params: { path: { workspace_id } },
          body: { name, scopes: scopes as (typeof SCOPES)[number][] },
        }),
      ),
    onSuccess: (key) => {
      setSecret(key.key);
      setName('');
      void refresh();
    },
  });
  const rotate = useMutation({
    mutationFn: (key_id: string) =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/api-keys/{key_id}/rotate', {
          params: { path: { workspace_id, key_id } },
        }),
      ),
    onSuccess: (key) => {
      setSecret(key.key);
      void refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (key_id: string) =>
      ok(
        api().DELETE('/api/v1/workspaces/{workspace_id}/api-keys/{key_id}', {
          params: { path: { workspace_id, key_id } },
        }),
      ),
    onSuccess: () => void refresh(),
  });
  return (
    <section>
      <PageHeader title="API keys" />
      {secret && <ShownOnce secret={secret} onDismiss={() => setSecret(undefined)} />}
      {canWrite && (
        <form
          class="card"
          aria-label="New API key"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate();
          }}
        >
          <Field label="Key name" name="name" error={create.error}>
            {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
          </Field>
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map((scope) => (
              <label class="check" key={scope}>
                <input
                  type="checkbox"
                  checked={scopes.includes(scope)}
                  onChange={(e) =>
                    setScopes((current) =>
                      e.currentTarget.checked ? [...current, scope] : current.filter((s) => s !== scope),
                    )
                  }
                />{' '}
                {scope}
              </label>
            ))}
          </fieldset>
          <FormError error={create.error} />
          <button type="submit" class="primary" disabled={create.isPending}>
            Create key
          </button>
        </form>
      )}
      <FormError error={rotate.error ?? revoke.error} />
      <PagedTable
        caption="API keys"
        queryKey={['api-keys', workspace_id]}
        rowKey={(key) => key.id}
        empty="No API keys yet."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/api-keys', {
              params: { path: { workspace_id }, query: { cursor } },
            }),
          )
        }
        columns={[
          { label: 'Name', render: (key) => key.name },
          { label: 'Key', render: (key) => <code>{key.secret_hint}</code> },
          { label: 'Scopes', render: (key) => key.scopes.join(', ') },
          { label: 'Status', render: (key) => key.status },
          { label: 'Last used', render: (key) => when(key.last_used_at) },
          {
            label: 'Actions',
            render: (key) =>
              canWrite && key.status === 'active' ? (
                <span class="buttons">
                  <button
                    type="button"
                    onClick={() => rotate.mutate(key.key_id)}
                    aria-label={`Rotate ${key.name}`}
                  >
                    Rotate
                  </button>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Revoke ${key.name}`}
                    onClick={() => {
                      if (confirm(`Revoke the key "${key.name}"? Anything using it stops working.`))
                        revoke.mutate(key.key_id);
                    }}
                  >
                    Revoke
                  </button>
                </span>
              ) : null,
          },
        ]}
      />
    </section>
  );
}
