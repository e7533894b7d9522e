import { useEffect, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { useLocation, useRoute } from 'preact-iso';
import { agentQueries } from '../../api/queries/agents';
import { ErrorState, Loading, PageHeader } from '../../components/ui';
import { useSession, useWorkspaceId } from '../../session';
import { AnsweringSwitch } from './answering';
import { AgentForm } from './form';
import { PiiRedactionSection } from './pii-redaction';
import { StartCall } from './start-call';
import { TestChat } from './test-chat';
import { VersionsSection } from './versions';

/** `?version=N`: the version to open in the Versions section. */
const versionParam = (value: string | undefined): number | undefined =>
  value !== undefined && /^[1-9]\d*$/.test(value) ? Number(value) : undefined;

/**
 * The agent page: its header (with the Test chat button), the test chat while open, the Answering
 * calls switch, Start a call, the form of everything else (its sections: form.tsx), then the
 * agent's versions (a restore loads the restored agent into the form afresh).
 */
export default function AgentPage() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const { params, query } = useRoute();
  const { route } = useLocation();
  const agentId = params.id;
  const [chatting, setChatting] = useState(false);
  const [restored, setRestored] = useState<{ from: number; to: number | null }>();
  const agent = useQuery(agentQueries.detail(workspace_id, agentId));
  useEffect(() => {
    setChatting(false);
    setRestored(undefined);
  }, [agentId]);
  if (agent.isPending) return <Loading />;
  if (agent.isError) return <ErrorState error={agent.error} retry={() => void agent.refetch()} />;
  return (
    <section>
      <PageHeader title={agent.data.name}>
        {canWrite && !chatting && (
          <button type="button" class="primary" onClick={() => setChatting(true)}>
            Test chat
          </button>
        )}
      </PageHeader>
      <p class="muted">
        {agent.data.version !== null && (
          <>
            <a href="#versions">Version {agent.data.version}</a> ·{' '}
          </>
        )}
        {agent.data.phone_number ? `Answers ${agent.data.phone_number}` : 'No phone number yet'} ·{' '}
        <a href={`/calls?agent_id=${agent.data.id}`}>Calls</a>
      </p>
      {chatting && (
        <TestChat workspaceId={workspace_id} agentId={agentId} onClose={() => setChatting(false)} />
      )}
      <AnsweringSwitch agent={agent.data} />
      {canWrite && <StartCall agent={agent.data} />}
      {/* Keyed by the last restore too: a restored agent is a new draft. */}
      <AgentForm key={`${agent.data.id}:${restored?.to ?? ''}`} agent={agent.data} />
      <PiiRedactionSection key={`pii:${agent.data.id}:${agent.data.version ?? ''}`} agent={agent.data} />
      <VersionsSection
        workspaceId={workspace_id}
        agent={agent.data}
        canWrite={canWrite}
        selected={versionParam(query.version)}
        restored={restored}
        onRestored={(saved, from) => {
          setRestored({ from, to: saved.version });
          route(`/agents/${agentId}#versions`);
        }}
      />
    </section>
  );
}
