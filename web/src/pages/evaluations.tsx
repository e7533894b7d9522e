import { useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { api, ok } from '../api/client';
import { PageHeader, PagedTable, when } from '../components/ui';
import { useWorkspaceId } from '../session';

export default function Evaluations() {
  const workspace_id = useWorkspaceId();
  const agents = useQuery({
    queryKey: ['agents', workspace_id, 'all'],
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/agents', {
          params: { path: { workspace_id }, query: { limit: 100 } },
        }),
      ),
  });
  const [picked, setPicked] = useState('');
  const agent_id = picked || agents.data?.items[0]?.id || '';
  return (
    <section>
      <PageHeader title="Evaluations" />
      <label>
        Agent{' '}
        <select value={agent_id} onChange={(e) => setPicked(e.currentTarget.value)}>
          {(agents.data?.items ?? []).map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      </label>
      {agent_id && (
        <PagedTable
          caption="Evaluations"
          queryKey={['evaluations', workspace_id, agent_id]}
          rowKey={(e) => e.id}
          empty="No evaluations of this agent yet."
          refetchInterval={3000}
          fetchPage={(cursor?: string) =>
            ok(
              api().GET('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/evaluations', {
                params: { path: { workspace_id, agent_id }, query: { cursor } },
              }),
            )
          }
          columns={[
            { label: 'Started', render: (e) => when(e.created_at) },
            { label: 'Status', render: (e) => e.status },
            { label: 'Scenarios', render: (e) => `${e.done} / ${e.total}` },
            {
              label: 'Results',
              render: (e) => (
                <ul class="plain">
                  {e.results.map((r, index) => (
                    <li key={index}>
                      {r.passed ? 'Passed' : 'Failed'}
                      {r.missing.length > 0 ? `: missing ${r.missing.join(', ')}` : ''}
                    </li>
                  ))}
                </ul>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
