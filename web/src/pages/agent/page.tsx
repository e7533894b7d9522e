import { useEffect, useState } from 'preact/hooks';
import { useQuery } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { agentQueries } from '../../api/queries/agents';
import { ErrorState, Loading, PageHeader } from '../../components/ui';
import { useSession, useWorkspaceId } from '../../session';
import { AnsweringSwitch } from './answering';
import { AgentForm } from './form';
import { StartCall } from './start-call';
import { TestChat } from './test-chat';

/**
 * The agent page: its header (with the Test chat button), the test chat while open, the Answering
 * calls switch, Start a call, then the form of everything else (its sections: form.tsx).
 */
export default function AgentPage() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const { params } = useRoute();
  const agentId = params.id;
  const [chatting, setChatting] = useState(false);
  const agent = useQuery(agentQueries.detail(workspace_id, agentId));
  useEffect(() => setChatting(false), [agentId]);
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
        {agent.data.phone_number ? `Answers ${agent.data.phone_number}` : 'No phone number yet'} ·{' '}
        <a href={`/calls?agent_id=${agent.data.id}`}>Calls</a>
      </p>
      {chatting && (
        <TestChat workspaceId={workspace_id} agentId={agentId} onClose={() => setChatting(false)} />
      )}
      <AnsweringSwitch agent={agent.data} />
      {canWrite && <StartCall agent={agent.data} />}
      <AgentForm key={agent.data.id} agent={agent.data} />
    </section>
  );
}
