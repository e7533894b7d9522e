import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { agentQueries } from '../api/queries/agents';
import { Empty, Field, FormActions, FormError, ListPageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

interface ScenarioDraft {
  name: string;
  callerLines: string;
  expect: string;
  criteria: string;
}

const blank = (): ScenarioDraft => ({ name: '', callerLines: '', expect: '', criteria: '' });

/** One entry a line, blank lines left out; none: absent (the API wants expect, criteria or both). */
const lines = (text: string): string[] | undefined => {
  const list = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return list.length > 0 ? list : undefined;
};

function NewEvaluation({ agent_id, onDone }: { agent_id: string; onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const [scenarios, setScenarios] = useState<ScenarioDraft[]>([blank()]);
  const edit = (index: number, field: keyof ScenarioDraft) => (e: { currentTarget: { value: string } }) => {
    const value = e.currentTarget.value;
    setScenarios((current) => current.map((s, i) => (i === index ? { ...s, [field]: value } : s)));
  };
  const run = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/evaluations', {
          params: { path: { workspace_id, agent_id } },
          body: {
            scenarios: scenarios.map((s) => ({
              name: s.name,
              caller_script: lines(s.callerLines) ?? [],
              expect: lines(s.expect),
              criteria: lines(s.criteria),
            })),
          },
        }),
      ),
    onSuccess: (evaluation) => {
      void queries.invalidateQueries({ queryKey: ['evaluations', workspace_id, agent_id] });
      onDone();
      route(`/evaluations/${agent_id}/${evaluation.id}`);
    },
  });
  return (
    <form
      class="card"
      aria-label="New evaluation"
      onSubmit={(e) => {
        e.preventDefault();
        run.mutate();
      }}
    >
      {scenarios.map((scenario, index) => {
        const at = `scenarios.${index}`;
        const n = scenarios.length > 1 ? ` ${index + 1}` : '';
        return (
          <fieldset key={index}>
            <legend>Scenario{n}</legend>
            <Field label={`Scenario name${n}`} name={`${at}.name`} error={run.error}>
              {(p) => <input {...p} value={scenario.name} onInput={edit(index, 'name')} required />}
            </Field>
            <Field
              label={`Caller lines${n}`}
              name={`${at}.caller_script`}
              error={run.error}
              nested
              hint="What the caller says, one line a turn."
            >
              {(p) => (
                <textarea {...p} rows={3} value={scenario.callerLines} onInput={edit(index, 'callerLines')} />
              )}
            </Field>
            <Field
              label={`Expected phrases${n}`}
              name={`${at}.expect`}
              error={run.error}
              nested
              hint="Phrases the agent must say, one a line (optional when criteria are given)."
            >
              {(p) => <textarea {...p} rows={2} value={scenario.expect} onInput={edit(index, 'expect')} />}
            </Field>
            <Field
              label={`Criteria${n}`}
              name={`${at}.criteria`}
              error={run.error}
              nested
              hint="What the model judges the agent against, one a line, e.g. “offers an inspection time”."
            >
              {(p) => (
                <textarea {...p} rows={2} value={scenario.criteria} onInput={edit(index, 'criteria')} />
              )}
            </Field>
            {scenarios.length > 1 && (
              <button
                type="button"
                onClick={() => setScenarios((current) => current.filter((_, i) => i !== index))}
              >
                Remove scenario{n}
              </button>
            )}
          </fieldset>
        );
      })}
      <button type="button" onClick={() => setScenarios((current) => [...current, blank()])}>
        Add scenario
      </button>
      <p class="hint">A run charges 20 credits when it starts.</p>
      <FormError error={run.error} />
      <FormActions submit="Run evaluation" pending={run.isPending} onCancel={onDone} />
    </form>
  );
}

export default function Evaluations() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const [creating, setCreating] = useState(false);
  const agents = useQuery(agentQueries.all(workspace_id));
  const [picked, setPicked] = useState('');
  const agent_id = picked || agents.data?.items[0]?.id || '';
  return (
    <section>
      <ListPageHeader
        title="Evaluations"
        newLabel="New evaluation"
        canWrite={canWrite && agent_id !== ''}
        creating={creating}
        onNew={() => setCreating(true)}
      />
      <div class="filters">
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
      </div>
      {creating && agent_id && <NewEvaluation agent_id={agent_id} onDone={() => setCreating(false)} />}
      {agents.isSuccess && agent_id === '' && (
        <Empty>Create an agent first: evaluations test an agent.</Empty>
      )}
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
            {
              label: 'Started',
              render: (e) => <a href={`/evaluations/${agent_id}/${e.id}`}>{when(e.created_at)}</a>,
            },
            { label: 'Status', render: (e) => <span class={`badge ${e.status}`}>{e.status}</span> },
            { label: 'Scenarios', render: (e) => `${e.done} / ${e.total}` },
            {
              label: 'Passed',
              render: (e) => `${e.results.filter((r) => r.passed).length} of ${e.results.length}`,
            },
          ]}
        />
      )}
    </section>
  );
}
