import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { Empty, ErrorState, FormError, Loading, PageHeader, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

export default function EvaluationDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const { agent_id, id: evaluation_id } = useRoute().params;
  const queries = useQueryClient();
  const key = ['evaluation', workspace_id, agent_id, evaluation_id];
  const evaluation = useQuery({
    queryKey: key,
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/evaluations/{evaluation_id}', {
          params: { path: { workspace_id, agent_id, evaluation_id } },
        }),
      ),
    refetchInterval: (query) => (query.state.data?.status === 'running' ? 1000 : false),
  });
  const cancel = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/evaluations/{evaluation_id}/cancel', {
          params: { path: { workspace_id, agent_id, evaluation_id } },
        }),
      ),
    onSuccess: (saved) => queries.setQueryData(key, saved),
  });
  if (evaluation.isPending) return <Loading />;
  if (evaluation.isError)
    return <ErrorState error={evaluation.error} retry={() => void evaluation.refetch()} />;
  const e = evaluation.data;
  const percent = e.total > 0 ? Math.floor((e.done / e.total) * 100) : 0;
  return (
    <section>
      <PageHeader title="Evaluation">
        {canWrite && e.status === 'running' && (
          <button type="button" class="danger" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
            Cancel evaluation
          </button>
        )}
      </PageHeader>
      <FormError error={cancel.error} />
      <p>
        Status:{' '}
        <span class={`badge ${e.status}`} role="status" aria-label="Evaluation status">
          {e.status}
        </span>
        {e.failure_reason ? ` (${e.failure_reason})` : ''} · started {when(e.created_at)} · {e.credits}{' '}
        credits · <a href="/evaluations">All evaluations</a>
      </p>
      <label>
        Scenarios judged
        <progress max={100} value={percent} aria-valuetext={`${e.done} of ${e.total}`} />
      </label>
      <h2>Results</h2>
      {e.results.length === 0 ? (
        <Empty>{e.status === 'running' ? 'No scenario judged yet.' : 'No results.'}</Empty>
      ) : (
        e.results.map((result, index) => (
          <article class="card result" key={index} aria-label={`Scenario ${result.scenario}`}>
            <h3>
              {result.scenario}:{' '}
              <span class={`badge ${result.passed ? 'passed' : 'failed'}`}>
                {result.passed ? 'Passed' : 'Failed'}
              </span>
            </h3>
            {result.missing.length > 0 && <p>Phrases the agent did not say: {result.missing.join(', ')}</p>}
            {result.criteria.length > 0 && (
              <ul class="plain criteria">
                {result.criteria.map((c) => (
                  <li key={c.criterion}>
                    <strong>{c.passed ? 'Met' : 'Not met'}</strong>: {c.criterion}
                    <span class="reason"> — {c.reason}</span>
                  </li>
                ))}
              </ul>
            )}
            <details>
              <summary>Transcript ({result.transcript.length} turns)</summary>
              <ol class="transcript">
                {result.transcript.map((turn, i) => (
                  <li key={i} class="turn">
                    <strong>{turn.role === 'agent' ? 'Agent' : 'Caller'}:</strong> {turn.text}
                  </li>
                ))}
              </ol>
            </details>
          </article>
        ))
      )}
    </section>
  );
}
