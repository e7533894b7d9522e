import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { agentQueries } from '../api/queries/agents';
import { phoneNumberQueries } from '../api/queries/phone-numbers';
import { Field, FormError, PageHeader, PagedTable } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

export default function PhoneNumbers() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [country, setCountry] = useState('AU');
  const refresh = () => queries.invalidateQueries({ queryKey: phoneNumberQueries.lists(workspace_id) });
  const agents = useQuery(agentQueries.all(workspace_id));
  const buy = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/phone-numbers', {
          params: { path: { workspace_id } },
          body: { country: country as 'AU' },
        }),
      ),
    onSuccess: () => void refresh(),
  });
  const assign = useMutation({
    mutationFn: ({ number_id, agent_id }: { number_id: string; agent_id: string | null }) =>
      ok(
        api().PATCH('/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}', {
          params: { path: { workspace_id, number_id } },
          body: { agent_id },
        }),
      ),
    onSuccess: () => void refresh(),
  });
  const release = useMutation({
    mutationFn: (number_id: string) =>
      ok(
        api().DELETE('/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}', {
          params: { path: { workspace_id, number_id } },
        }),
      ),
    onSuccess: () => void refresh(),
  });
  return (
    <section>
      <PageHeader title="Phone numbers" />
      {canWrite && (
        <form
          class="card row"
          aria-label="Buy a number"
          onSubmit={(e) => {
            e.preventDefault();
            buy.mutate();
          }}
        >
          <Field label="Country" name="country" error={buy.error}>
            {(p) => (
              <input
                {...p}
                value={country}
                maxLength={2}
                onInput={(e) => setCountry(e.currentTarget.value.toUpperCase())}
              />
            )}
          </Field>
          <button type="submit" class="primary" disabled={buy.isPending}>
            Buy number
          </button>
          <FormError error={buy.error} />
        </form>
      )}
      <FormError error={assign.error ?? release.error} />
      <PagedTable
        caption="Phone numbers"
        {...phoneNumberQueries.list(workspace_id)}
        rowKey={(n) => n.id}
        empty="No phone numbers yet."
        columns={[
          { label: 'Number', render: (n) => n.phone_number },
          {
            label: 'Agent',
            render: (n) =>
              canWrite ? (
                <select
                  aria-label={`Agent answering ${n.phone_number}`}
                  value={n.agent_id ?? ''}
                  onChange={(e) =>
                    assign.mutate({ number_id: n.id, agent_id: e.currentTarget.value || null })
                  }
                >
                  <option value="">No agent</option>
                  {(agents.data?.items ?? []).map((a) => (
                    <option key={a.id} value={a.id}>
                      {a.name}
                    </option>
                  ))}
                </select>
              ) : (
                (agents.data?.items.find((a) => a.id === n.agent_id)?.name ?? '—')
              ),
          },
          {
            label: 'Actions',
            render: (n) =>
              canWrite ? (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Release ${n.phone_number}`}
                  onClick={() => {
                    if (confirm(`Release ${n.phone_number}? It cannot be got back.`)) release.mutate(n.id);
                  }}
                >
                  Release
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}
