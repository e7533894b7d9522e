import { useEffect, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { useLocation, useRoute } from 'preact-iso';
import { agentQueries } from '../../api/queries/agents';
import { ErrorState, Loading, PageHeader } from '../../components/ui';
import { useSession, useWorkspaceId } from '../../session';
import { AnsweringSwitch } from './answering';
import { AgentForm } from './form';
import { HandoffsSetting } from './handoffs';
import { PiiRedactionSection } from './pii-redaction';
import { StartCall } from './start-call';
import { TestChat } from './test-chat';
import { TestCallButton } from './test-call-button';
import { VersionsSection } from './versions';

/** `?version=N`: the version to open in the Versions section. */
const versionParam = (value: string | undefined): number | undefined =>
  value !== undefined && /^[1-9]\d*$/.test(value) ? Number(value) : undefined;

/**
 * The agent page: its header (with the Test chat button), the test chat while open, the Answering
 * calls switch, then the editor (form.tsx: a rail of sections, sections.ts, and one Save bar), the
 * agent's versions (a restore loads the restored agent into the form afresh) and Test (Start a call).
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
        {canWrite && <TestCallButton workspaceId={workspace_id} agent={agent.data} />}
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
        <TestChat
          workspaceId={workspace_id}
          agentId={agentId}
          currentVersion={agent.data.version}
          onClose={() => setChatting(false)}
        />
      )}
      <AnsweringSwitch agent={agent.data} />
      {/* Keyed by the last restore too: a restored agent is a new draft. */}
      <AgentForm
        key={`${agent.data.id}:${restored?.to ?? ''}`}
        agent={agent.data}
        after={
          <>
            <HandoffsSetting
              key={`handoffs:${agent.data.id}:${restored?.to ?? ''}`}
              agent={agent.data}
              workspaceId={workspace_id}
            />
            <PiiRedactionSection
              key={`pii:${agent.data.id}:${agent.data.version ?? ''}`}
              agent={agent.data}
            />
            <VersionsSection
              workspaceId={workspace_id}
              agent={agent.data}
              canWrite={canWrite}
              selected={versionParam(query.version)}
              compare={versionParam(query.compare)}
              restored={restored}
              onRestored={(saved, from) => {
                setRestored({ from, to: saved.version });
                route(`/agents/${agentId}#versions`);
              }}
            />
            <section class="card" id="test" aria-labelledby="test-h">
              <h2 id="test-h">Test</h2>
              <p class="muted">
                Test chat (at the top of the page) talks to the agent as a caller would; Start a call dials a
                number with it.
              </p>
              {canWrite ? <StartCall agent={agent.data} /> : <p class="muted">Viewers cannot place calls.</p>}
            </section>
          </>
        }
      />
    </section>
  );
}
