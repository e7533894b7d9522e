import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { messageOf } from '../../api/client';
import { agentQueries, updateAgent, type Agent } from '../../api/queries/agents';
import { useSession, useWorkspaceId } from '../../session';

/** The Answering calls switch: saved at once, on its own (not with the form). */
export function AnsweringSwitch({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const toggle = useMutation({
    mutationFn: (answering_calls: boolean) => updateAgent(workspace_id, agent.id, { answering_calls }),
    onSuccess: (saved) => queries.setQueryData(agentQueries.detail(workspace_id, agent.id).queryKey, saved),
  });
  return (
    <div class="row">
      <label class="check">
        <input
          type="checkbox"
          role="switch"
          checked={agent.answering_calls}
          disabled={!canWrite || toggle.isPending}
          onChange={(e) => toggle.mutate(e.currentTarget.checked)}
        />{' '}
        Answering calls
      </label>
      {agent.suspended_by_billing && <span class="badge warn">Suspended by billing</span>}
      {toggle.isError && <span role="alert">{messageOf(toggle.error)}</span>}
    </div>
  );
}
