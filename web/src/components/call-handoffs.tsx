import { useQuery } from '@tanstack/preact-query';
import { agentQueries } from '../api/queries/agents';

/**
 * Where each agent took over a call (agents that hand off): a marker line "Handed to <agent> — reason"
 * in the transcript, before the first line the target spoke after it (or at the handoff's time when
 * the target said nothing), and each agent line labelled by its agent when the call had handoffs.
 */

interface Handoff {
  to_agent_id: string;
  at: string;
  reason: string;
}

interface Turn {
  role: 'agent' | 'user';
  offset_seconds: number;
  agent_id?: string;
}

interface CallWithHandoffs {
  agent_id: string;
  connected_at: string | null;
  transcript: Turn[];
  handoffs: Handoff[];
}

/** A marker: the handoff, and its time in the transcript's seconds (null when it cannot be placed in time). */
interface Marker {
  handoff: Handoff;
  offset: number | null;
}

export interface HandoffView {
  /** The markers to show before the transcript line at this index (the line count: after the last). */
  before: (index: number) => Marker[];
  /** The label of an agent line: "Agent" on a call without handoffs, else its agent's name. */
  agentLabel: (agentId: string | undefined) => string;
  /** An agent's name (its id when it is not found, e.g. deleted). */
  name: (agentId: string) => string;
}

/** Where each handoff goes in the transcript: before the target's first line after the previous one. */
function positions(call: CallWithHandoffs): Map<number, Marker[]> {
  const at = new Map<number, Marker[]>();
  const answered = call.connected_at ? Date.parse(call.connected_at) : NaN;
  let from = 0;
  for (const handoff of call.handoffs) {
    let index = call.transcript.findIndex(
      (turn, i) => i >= from && turn.role === 'agent' && turn.agent_id === handoff.to_agent_id,
    );
    // At the target's first line's time; when it said nothing, at the handoff's own time.
    let offset: number | null = index >= 0 ? (call.transcript[index]?.offset_seconds ?? null) : null;
    if (index < 0) {
      const since = (Date.parse(handoff.at) - answered) / 1000;
      offset = Number.isFinite(since) && since >= 0 ? since : null;
      index =
        offset !== null
          ? call.transcript.findIndex((turn, i) => i >= from && turn.offset_seconds > since)
          : -1;
      if (index < 0) index = call.transcript.length;
    }
    at.set(index, [...(at.get(index) ?? []), { handoff, offset }]);
    from = index;
  }
  return at;
}

export function useHandoffView(workspaceId: string, call: CallWithHandoffs): HandoffView {
  const handedOver = call.handoffs.length > 0;
  const agents = useQuery({ ...agentQueries.all(workspaceId), enabled: handedOver });
  const names = new Map((agents.data?.items ?? []).map((a) => [a.id, a.name]));
  const name = (agentId: string) => names.get(agentId) ?? agentId;
  const at = handedOver ? positions(call) : new Map<number, Marker[]>();
  return {
    before: (index) => at.get(index) ?? [],
    agentLabel: (agentId) => (handedOver ? name(agentId ?? call.agent_id) : 'Agent'),
    name,
  };
}

const clock = (seconds: number): string =>
  `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

/** The marker lines before one transcript line. */
export function HandoffMarkers({ view, index }: { view: HandoffView; index: number }) {
  return (
    <>
      {view.before(index).map(({ handoff, offset }, i) => (
        <li key={`handoff-${index}-${i}`} class="turn turn-handoff">
          {offset !== null && <span class="muted">{clock(offset)}</span>}{' '}
          <strong>Handed to {view.name(handoff.to_agent_id)}</strong>
          {handoff.reason ? ` — ${handoff.reason}` : ''}
        </li>
      ))}
    </>
  );
}
