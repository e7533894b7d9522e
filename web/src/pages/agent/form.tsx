import type { ComponentChildren } from 'preact';
import { useMemo, useReducer } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { agentQueries, updateAgent, type Agent } from '../../api/queries/agents';
import { versionQueries } from '../../api/queries/versions';
import { FormError } from '../../components/ui';
import { useSession, useWorkspaceId } from '../../session';
import { changedFields, draftOf, draftReducer, toBody, type AgentDraft, type SectionProps } from './draft';
import { changesText, FORM_SECTIONS, PAGE_SECTIONS, sectionAnchor, sectionChanges } from './sections';

/** The left rail: every section of the page, a changed one marked (its count said to screen readers). */
function SectionRail({ changes }: { changes: Map<string, number> }) {
  return (
    <nav class="rail" aria-label="Agent sections">
      <ul>
        {FORM_SECTIONS.map((section) => {
          const count = changes.get(section.id) ?? 0;
          return (
            <li key={section.id}>
              <a href={`#${sectionAnchor(section.id)}`} class={count > 0 ? 'dirty' : undefined}>
                {section.label}
                {count > 0 && <span class="visually-hidden"> ({changesText(count)})</span>}
              </a>
            </li>
          );
        })}
        {PAGE_SECTIONS.map((section) => (
          <li key={section.id}>
            <a href={`#${section.id}`}>{section.label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * The agent editor: the rail, the form's sections (sections.ts) each with its changed state, and one
 * sticky Save bar that says how many changes it will save and where; `after` (the Versions and Test
 * sections) follows the form. Everything but the Answering calls switch is saved with one PATCH.
 */
export function AgentForm({ agent, after }: { agent: Agent; after?: ComponentChildren }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [draft, dispatch] = useReducer(draftReducer, agent, draftOf);
  // The saved agent's own draft: what each section is compared with.
  const base = useMemo<AgentDraft>(() => draftOf(agent), [agent]);
  const changes = sectionChanges(draft, base);
  const save = useMutation({
    mutationFn: () =>
      updateAgent(workspace_id, agent.id, changedFields(toBody(draft, agent), toBody(base, agent))),
    onSuccess: (saved) => {
      queries.setQueryData(agentQueries.detail(workspace_id, agent.id).queryKey, saved);
      dispatch({ type: 'saved', agent: saved });
      // A save that changed something made a version.
      void queries.invalidateQueries({ queryKey: versionQueries.prefix(workspace_id, agent.id) });
    },
  });
  const edit = (change: Partial<AgentDraft>) => {
    if (save.isSuccess || save.isError) save.reset();
    dispatch({ type: 'edit', change });
  };
  const section: SectionProps = {
    agent,
    workspaceId: workspace_id,
    draft,
    edit,
    error: save.error,
    canWrite,
  };
  const where = FORM_SECTIONS.filter((s) => (changes.bySection.get(s.id) ?? 0) > 0).map((s) => s.label);
  return (
    <div class="editor">
      <SectionRail changes={changes.bySection} />
      <div class="editor-body">
        <form
          aria-label="Agent settings"
          onSubmit={(event) => {
            event.preventDefault();
            save.mutate();
          }}
        >
          <fieldset disabled={!canWrite} class={canWrite ? undefined : 'read-only'}>
            {FORM_SECTIONS.map(({ id, label, parts }) => {
              const count = changes.bySection.get(id) ?? 0;
              return (
                <section
                  key={id}
                  id={sectionAnchor(id)}
                  class="card"
                  aria-labelledby={`${sectionAnchor(id)}-h`}
                >
                  <h2 id={`${sectionAnchor(id)}-h`}>
                    {label}
                    {count > 0 && <span class="badge warn">{changesText(count)}</span>}
                  </h2>
                  {parts.map(({ Component }, index) => (
                    <Component key={index} {...section} />
                  ))}
                </section>
              );
            })}
          </fieldset>
          {canWrite && (
            <div class="save-bar" role="group" aria-label="Save changes">
              <p class="save-state" aria-live="polite">
                {save.isSuccess && changes.total === 0 ? (
                  <span role="status">Saved.</span>
                ) : (
                  <>
                    <strong>{changesText(changes.total)}</strong>
                    {where.length > 0 && <span class="muted"> · {where.join(', ')}</span>}
                  </>
                )}
              </p>
              <FormError error={save.error} />
              <div class="buttons">
                {changes.total > 0 && (
                  <button
                    type="button"
                    disabled={save.isPending}
                    onClick={() => {
                      save.reset();
                      dispatch({ type: 'reset', agent });
                    }}
                  >
                    Discard changes
                  </button>
                )}
                <button type="submit" class="primary" disabled={save.isPending}>
                  Save
                </button>
              </div>
            </div>
          )}
        </form>
        {after}
      </div>
    </div>
  );
}
