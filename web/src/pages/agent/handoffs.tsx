import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { agentQueries, updateAgent, type Agent } from '../../api/queries/agents';
import { versionQueries } from '../../api/queries/versions';
import { Empty, ErrorState, Field, FieldMessages, FormError, Loading } from '../../components/ui';
import { useSession } from '../../session';
import { draftKey } from './draft';

/**
 * The agent's Handoffs: the agents of the workspace it may hand a call over to, in the same call (its
 * model's built-in tool `handoff_to_agent`), each with when to hand over and the history the target
 * gets. Saved on its own (one PATCH of `handoffs`, which replaces the list); viewers see it read-only.
 */

type Context = Agent['handoffs'][number]['context'];

interface HandoffDraft {
  key: string;
  agentId: string;
  description: string;
  context: Context;
}

const MAX_HANDOFFS = 10;

const CONTEXTS: { value: Context; label: string }[] = [
  { value: 'full', label: "Full: the caller's and agents' words so far" },
  { value: 'summary', label: "Summary: a note (who, why, a summary) and the caller's last line" },
  { value: 'none', label: "None: the caller's last line only" },
];

const draftsOf = (agent: Agent): HandoffDraft[] =>
  agent.handoffs.map((h) => ({
    key: draftKey(),
    agentId: h.agent_id,
    description: h.description,
    context: h.context,
  }));

export function HandoffsSetting({ agent, workspaceId }: { agent: Agent; workspaceId: string }) {
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const agents = useQuery(agentQueries.all(workspaceId));
  const [drafts, setDrafts] = useState<HandoffDraft[]>(() => draftsOf(agent));
  const save = useMutation({
    mutationFn: () =>
      updateAgent(workspaceId, agent.id, {
        handoffs: drafts.map((d) => ({
          agent_id: d.agentId,
          description: d.description,
          context: d.context,
        })),
      }),
    onSuccess: (saved) => {
      queries.setQueryData(agentQueries.detail(workspaceId, agent.id).queryKey, saved);
      setDrafts(draftsOf(saved));
      void queries.invalidateQueries({ queryKey: versionQueries.prefix(workspaceId, agent.id) });
    },
  });
  const others = (agents.data?.items ?? []).filter((a) => a.id !== agent.id);
  const nameOf = (id: string) => others.find((a) => a.id === id)?.name;
  const change = (key: string, part: Partial<HandoffDraft>) =>
    setDrafts((list) => list.map((d) => (d.key === key ? { ...d, ...part } : d)));
  const unused = others.filter((a) => !drafts.some((d) => d.agentId === a.id));
  return (
    <form
      class="card"
      id="handoffs"
      aria-label="Handoffs"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <h2>Handoffs</h2>
      <p class="muted">
        Other agents of this workspace this agent may pass a caller to, in the same call: the target answers
        at once, at its own version, with what it is told here.
      </p>
      {agents.isPending && <Loading what="Loading agents…" />}
      {agents.isError && <ErrorState error={agents.error} retry={() => void agents.refetch()} />}
      <fieldset disabled={!canWrite} class={canWrite ? undefined : 'read-only'}>
        {drafts.length === 0 && <Empty>This agent hands no calls over.</Empty>}
        {drafts.map((d, index) => (
          <fieldset class="subform" key={d.key}>
            <legend>{nameOf(d.agentId) ?? `${d.agentId} (not found)`}</legend>
            <div class="grid">
              <Field label="Hand over to" name={`handoffs.${index}.agent_id`} error={save.error}>
                {(p) => (
                  <select
                    {...p}
                    value={d.agentId}
                    onChange={(e) => change(d.key, { agentId: e.currentTarget.value })}
                  >
                    {!nameOf(d.agentId) && <option value={d.agentId}>{d.agentId} (not found)</option>}
                    {others
                      .filter((a) => a.id === d.agentId || unused.includes(a))
                      .map((a) => (
                        <option key={a.id} value={a.id}>
                          {a.name}
                        </option>
                      ))}
                  </select>
                )}
              </Field>
              <Field label="Context" name={`handoffs.${index}.context`} error={save.error}>
                {(p) => (
                  <select
                    {...p}
                    value={d.context}
                    onChange={(e) => change(d.key, { context: e.currentTarget.value as Context })}
                  >
                    {CONTEXTS.map((c) => (
                      <option key={c.value} value={c.value}>
                        {c.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            </div>
            <Field
              label="When to hand over"
              name={`handoffs.${index}.description`}
              error={save.error}
              hint="In words the model reads, at most 500 characters: e.g. the caller wants to buy, or asks for sales."
            >
              {(p) => (
                <textarea
                  {...p}
                  rows={2}
                  maxLength={500}
                  value={d.description}
                  onInput={(e) => change(d.key, { description: e.currentTarget.value })}
                />
              )}
            </Field>
            {canWrite && (
              <button
                type="button"
                aria-label={`Remove handoff to ${nameOf(d.agentId) ?? d.agentId}`}
                onClick={() => setDrafts((list) => list.filter((x) => x.key !== d.key))}
              >
                Remove
              </button>
            )}
          </fieldset>
        ))}
        <FieldMessages error={save.error} name="handoffs" />
      </fieldset>
      <FormError error={save.error} />
      {save.isSuccess && <p role="status">Handoffs saved.</p>}
      {canWrite && (
        <p class="actions">
          <button
            type="button"
            disabled={unused.length === 0 || drafts.length >= MAX_HANDOFFS}
            onClick={() =>
              setDrafts((list) => [
                ...list,
                { key: draftKey(), agentId: unused[0].id, description: '', context: 'full' },
              ])
            }
          >
            Add handoff
          </button>{' '}
          <button type="submit" class="primary" disabled={save.isPending}>
            Save handoffs
          </button>
        </p>
      )}
    </form>
  );
}
