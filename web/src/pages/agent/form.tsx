import type { FunctionComponent } from 'preact';
import { useReducer } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { agentQueries, updateAgent, type Agent } from '../../api/queries/agents';
import { versionQueries } from '../../api/queries/versions';
import { FormError } from '../../components/ui';
import { useSession, useWorkspaceId } from '../../session';
import { AnalysisSection } from './analysis';
import { CallsSection } from './calls';
import { changedFields, draftOf, draftReducer, toBody, type AgentDraft, type SectionProps } from './draft';
import { KnowledgeSection } from './knowledge';
import { PostCallActionsSection } from './post-call-actions';
import { SettingsSection } from './settings';
import { ToolsSection } from './tools';
import { TransferSection } from './transfer';
import { VoiceSection } from './voice';
import { VoicemailSection } from './voicemail';

/** The form's sections, in order: a new one is a file of its own and a line here. */
const SECTIONS: FunctionComponent<SectionProps>[] = [
  SettingsSection,
  VoiceSection,
  CallsSection,
  TransferSection,
  VoicemailSection,
  KnowledgeSection,
  AnalysisSection,
  PostCallActionsSection,
  ToolsSection,
];

/** Everything an agent has but its Answering calls switch, saved with one PATCH. */
export function AgentForm({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [draft, dispatch] = useReducer(draftReducer, agent, draftOf);
  const save = useMutation({
    mutationFn: () =>
      updateAgent(workspace_id, agent.id, changedFields(toBody(draft, agent), toBody(draftOf(agent), agent))),
    onSuccess: (saved) => {
      queries.setQueryData(agentQueries.detail(workspace_id, agent.id).queryKey, saved);
      dispatch({ type: 'saved', agent: saved });
      // A save that changed something made a version.
      void queries.invalidateQueries({ queryKey: versionQueries.prefix(workspace_id, agent.id) });
    },
  });
  const edit = (change: Partial<AgentDraft>) => dispatch({ type: 'edit', change });
  const section: SectionProps = {
    agent,
    workspaceId: workspace_id,
    draft,
    edit,
    error: save.error,
    canWrite,
  };
  return (
    <form
      class="card"
      aria-label="Agent settings"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <fieldset disabled={!canWrite} class={canWrite ? undefined : 'read-only'}>
        {SECTIONS.map((Section, index) => (
          <Section key={index} {...section} />
        ))}
      </fieldset>
      <FormError error={save.error} />
      {save.isSuccess && <p role="status">Saved.</p>}
      {canWrite && (
        <button type="submit" class="primary" disabled={save.isPending}>
          Save
        </button>
      )}
    </form>
  );
}
