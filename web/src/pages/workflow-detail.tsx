import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { workflowQueries } from '../api/queries/workflows';
import { ErrorState, FormError, Loading, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

const STAGES = ['signal', 'task', 'outcome'] as const;
type Stage = (typeof STAGES)[number];

export default function WorkflowDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const { params } = useRoute();
  const workflow_id = params.id;
  const queries = useQueryClient();
  const workflow = useQuery(workflowQueries.detail(workspace_id, workflow_id));
  const update = useMutation({
    mutationFn: (body: { auto_mode?: boolean; stages?: Record<string, unknown> }) =>
      ok(
        api().PATCH('/api/v1/workspaces/{workspace_id}/workflows/{workflow_id}', {
          params: { path: { workspace_id, workflow_id } },
          body: body as never,
        }),
      ),
    onSuccess: (saved) =>
      queries.setQueryData(workflowQueries.detail(workspace_id, workflow_id).queryKey, saved),
  });
  const review = useMutation({
    mutationFn: ({
      run_id,
      stage,
      verdict,
    }: {
      run_id: string;
      stage: Stage;
      verdict: 'approve' | 'reject';
    }) => {
      const path = { params: { path: { workspace_id, workflow_id, run_id, stage } } };
      return verdict === 'approve'
        ? ok(
            api().POST(
              '/api/v1/workspaces/{workspace_id}/workflows/{workflow_id}/runs/{run_id}/stages/{stage}/approve',
              path,
            ),
          )
        : ok(
            api().POST(
              '/api/v1/workspaces/{workspace_id}/workflows/{workflow_id}/runs/{run_id}/stages/{stage}/reject',
              path,
            ),
          );
    },
    onSuccess: () =>
      queries.invalidateQueries({ queryKey: workflowQueries.runs(workspace_id, workflow_id).queryKey }),
  });
  if (workflow.isPending) return <Loading />;
  if (workflow.isError) return <ErrorState error={workflow.error} retry={() => void workflow.refetch()} />;
  const w = workflow.data;
  const stages = w.stages as unknown as Record<Stage, { yolo?: boolean } & Record<string, unknown>>;
  return (
    <section>
      <PageHeader title={w.name} />
      <p class="muted">Trigger: {w.trigger.type === 'event' ? w.trigger.event : 'external'}</p>
      <fieldset class={canWrite ? 'card' : 'card read-only'} disabled={!canWrite || update.isPending}>
        <legend>Review</legend>
        <label class="check">
          <input
            type="checkbox"
            role="switch"
            checked={w.auto_mode}
            onChange={(e) => update.mutate({ auto_mode: e.currentTarget.checked })}
          />{' '}
          Auto Mode
        </label>
        {STAGES.map((stage) => (
          <label class="check" key={stage}>
            <input
              type="checkbox"
              checked={stages[stage]?.yolo === true}
              onChange={(e) =>
                update.mutate({
                  stages: { ...stages, [stage]: { ...stages[stage], yolo: e.currentTarget.checked } },
                })
              }
            />{' '}
            Yolo: {stage} without review
          </label>
        ))}
        <FormError error={update.error} />
      </fieldset>
      <details class="card">
        <summary>Stages</summary>
        <pre class="code">{JSON.stringify(w.stages, null, 2)}</pre>
      </details>
      <h2>Runs</h2>
      <FormError error={review.error} />
      <PagedTable
        caption="Runs"
        {...workflowQueries.runs(workspace_id, workflow_id)}
        rowKey={(run) => run.id}
        empty="No runs yet."
        refetchInterval={2000}
        columns={[
          { label: 'Started', render: (run) => when(run.created_at) },
          { label: 'Event', render: (run) => run.event.type },
          { label: 'Status', render: (run) => <span class={`badge ${run.status}`}>{run.status}</span> },
          {
            label: 'Stages',
            render: (run) =>
              STAGES.map(
                (stage) =>
                  `${stage}: ${(run.stages as unknown as Record<Stage, { state: string }>)[stage]?.state ?? '—'}`,
              ).join(', '),
          },
          {
            label: 'Review',
            render: (run) => {
              const waiting = STAGES.find(
                (stage) =>
                  (run.stages as unknown as Record<Stage, { state: string }>)[stage]?.state ===
                  'waiting_review',
              );
              if (!canWrite || !waiting) return null;
              return (
                <span class="buttons">
                  <button
                    type="button"
                    class="primary"
                    disabled={review.isPending}
                    onClick={() => review.mutate({ run_id: run.id, stage: waiting, verdict: 'approve' })}
                  >
                    Approve {waiting}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={review.isPending}
                    onClick={() => review.mutate({ run_id: run.id, stage: waiting, verdict: 'reject' })}
                  >
                    Reject {waiting}
                  </button>
                </span>
              );
            },
          },
        ]}
      />
    </section>
  );
}
