import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { accessToken, api, ApiError, ok } from '../api/client';
import { versionHref } from '../api/queries/versions';
import { config } from '../config';
import { HandoffMarkers, useHandoffView } from '../components/call-handoffs';
import { clock, endReasonLabel } from '../components/call-labels';
import { DeliveriesTable } from '../components/deliveries';
import { ErrorState, FormError, Loading, PageHeader, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

const FINAL = new Set(['completed', 'failed']);

/** How long after its end a call's analysis may still come in (then the page stops asking). */
const ANALYSIS_WAIT_MS = 120_000;

const recentlyEnded = (call: Call): boolean =>
  call.ended_at !== null && Date.now() - Date.parse(call.ended_at) < ANALYSIS_WAIT_MS;

/** A machine's call (voicemail) has no conversation to analyse: only a call with a person gets one. */
const analysisExpected = (call: Call): boolean =>
  call.transcript.length > 0 && call.answered_by !== 'machine';

/** Nothing more will change: ended, the recording in (or none), the analysis in (or none coming). */
function settled(call: Call): boolean {
  if (!FINAL.has(call.status)) return false;
  if (call.record && !call.recording_available) return false;
  const analysisDue = analysisExpected(call) && call.analysis === null;
  const endedAt = call.ended_at ? Date.parse(call.ended_at) : 0;
  return !analysisDue || Date.now() - endedAt > ANALYSIS_WAIT_MS;
}

const loadCall = (workspace_id: string, call_id: string) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/calls/{call_id}', {
      params: { path: { workspace_id, call_id } },
    }),
  );
type Call = Awaited<ReturnType<typeof loadCall>>;

/**
 * The recording, fetched with the user's token (its route answers with a redirect to a short-lived
 * signed URL, which the audio element could not authenticate for) and played from memory.
 */
function useRecording(call: Call): { src?: string; error?: string } {
  const [state, setState] = useState<{ src?: string; error?: string }>({});
  useEffect(() => {
    if (!call.recording_available || !call.recording) return;
    let revoked = false;
    let objectUrl: string | undefined;
    void fetch(`${config().api_base}${call.recording.url}`, {
      headers: { authorization: `Bearer ${accessToken() ?? ''}` },
    })
      .then(async (response) => {
        if (!response.ok) throw new Error(`the recording could not be loaded (${response.status})`);
        objectUrl = URL.createObjectURL(await response.blob());
        if (!revoked) setState({ src: objectUrl });
      })
      .catch((error: unknown) =>
        setState({ error: error instanceof Error ? error.message : 'the recording could not be loaded' }),
      );
    return () => {
      revoked = true;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [call.id, call.recording_available]);
  return state;
}

type ToolCall = Call['tool_calls'][number];

/**
 * When in the recording a tool ran, in the transcript's seconds: its time's share of the call's
 * wall-clock span, of the call's recorded length (a simulated call's seconds are scaled).
 */
function toolOffset(call: Call, tool: ToolCall): number {
  const start = Date.parse(call.inprogress_at ?? call.connected_at ?? call.created_at);
  const at = Date.parse(tool.at) - start;
  const wall = call.ended_at ? Date.parse(call.ended_at) - start : 0;
  const length = call.duration_seconds ?? call.transcript.at(-1)?.offset_seconds ?? 0;
  return wall > 0 && length > 0 ? Math.max(0, (at / wall) * length) : Math.max(0, at / 1000);
}

/** The tool calls after each turn (by the turn they followed); those before the first, at -1. */
function toolsByTurn(call: Call): Map<number, ToolCall[]> {
  const byTurn = new Map<number, ToolCall[]>();
  for (const tool of call.tool_calls) {
    const offset = toolOffset(call, tool);
    const turn = call.transcript.reduce(
      (found, t, index) => (t.offset_seconds <= offset ? index : found),
      -1,
    );
    byTurn.set(turn, [...(byTurn.get(turn) ?? []), tool]);
  }
  return byTurn;
}

const toolFacts = (tool: ToolCall): string =>
  [
    tool.type ?? 'tool',
    tool.status ?? (tool.ok ? 'ok' : 'error'),
    tool.http_status !== undefined ? `HTTP ${tool.http_status}` : '',
    tool.duration_ms !== undefined ? `${tool.duration_ms} ms` : '',
  ]
    .filter(Boolean)
    .join(' · ');

/** A tool call where it happened in the conversation: its name, type, status, HTTP status and duration. */
function ToolMarker({ tool }: { tool: ToolCall }) {
  return (
    <div class={`marker tool-marker${tool.ok ? '' : ' failed'}`}>
      <span class="marker-kind">Tool</span> <code>{tool.name}</code>{' '}
      <span class="muted">{toolFacts(tool)}</span>
      {Object.keys(tool.arguments).length > 0 && (
        <code class="arguments">{JSON.stringify(tool.arguments)}</code>
      )}
      {tool.error && <span class="field-error"> {tool.error}</span>}
    </div>
  );
}

/** The call's transfer, where it ended the conversation. */
function TransferMarker({ call }: { call: Call }) {
  const to = call.transfer?.to ?? call.transferred_to;
  if (!to) return null;
  return (
    <div class="marker transfer-marker">
      <span class="marker-kind">Transfer</span> {call.transfer?.mode ?? 'cold'} to {to}
      {call.transfer?.status ? ` · ${call.transfer.status}` : ''}
    </div>
  );
}

/**
 * The call replayed: the recording's player above the transcript; each line with its time (a click
 * plays the recording from there), the line being heard highlighted; the agent's tool calls inline
 * after the line they followed, the transfer as a marker where the conversation ended.
 */
function RecordingAndTranscript({ call }: { call: Call }) {
  const recording = useRecording(call);
  const audio = useRef<HTMLAudioElement>(null);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState(0);
  const turns = call.transcript;
  const handoffs = useHandoffView(call.workspace_id, call);
  const tools = toolsByTurn(call);
  // At the recording's end the last turn is the one heard, even when its offset is a little past the
  // recording's length (the provider's duration is whole seconds, the turn's offset is when it began).
  const atEnd = duration > 0 && time >= duration - 0.25;
  const current = atEnd
    ? turns.length - 1
    : turns.reduce((found, turn, index) => (turn.offset_seconds <= time + 0.05 ? index : found), -1);
  return (
    <section class="card" aria-label="Recording and transcript">
      <h2>Recording</h2>
      {!call.recording_available && <p class="muted">No recording.</p>}
      {recording.error && <p role="alert">{recording.error}</p>}
      {call.recording_available && !recording.src && !recording.error && (
        <p role="status">Loading the recording…</p>
      )}
      {recording.src && (
        <div class="player">
          <audio
            ref={audio}
            controls
            src={recording.src}
            aria-label="Call recording"
            onTimeUpdate={(e) => setTime(e.currentTarget.currentTime)}
            onSeeked={(e) => setTime(e.currentTarget.currentTime)}
            onLoadedMetadata={(e) => setDuration(e.currentTarget.duration)}
          />
          <span class="player-time" aria-label="Playing at">
            {clock(time)}
            {duration > 0 && Number.isFinite(duration) ? ` / ${clock(duration)}` : ''}
          </span>
        </div>
      )}
      <h2>Transcript</h2>
      {(tools.get(-1) ?? []).map((tool, index) => (
        <ToolMarker key={`before-${index}`} tool={tool} />
      ))}
      {turns.length === 0 ? (
        <p class="muted">No transcript.</p>
      ) : (
        <ol class="transcript">
          {turns.map((turn, index) => (
            <Fragment key={index}>
              <HandoffMarkers view={handoffs} index={index} />
              <li
                class={`turn turn-${turn.role}${index === current ? ' current' : ''}`}
                aria-current={index === current ? 'true' : undefined}
              >
                <button
                  type="button"
                  class="link"
                  disabled={!recording.src}
                  onClick={() => {
                    if (!audio.current) return;
                    audio.current.currentTime = turn.offset_seconds;
                    setTime(turn.offset_seconds);
                    void audio.current.play();
                  }}
                >
                  {clock(turn.offset_seconds)}
                </button>{' '}
                <span class="who">
                  {turn.role === 'agent' ? handoffs.agentLabel(turn.agent_id) : 'Caller'}
                </span>{' '}
                {turn.text}
                {(tools.get(index) ?? []).map((tool, i) => (
                  <ToolMarker key={i} tool={tool} />
                ))}
                {index === turns.length - 1 && <TransferMarker call={call} />}
              </li>
            </Fragment>
          ))}
          <HandoffMarkers view={handoffs} index={turns.length} />
        </ol>
      )}
    </section>
  );
}

const ms = (value: number | null): string => (value === null ? '—' : `${value} ms`);

const valueText = (value: string | number | boolean | null): string =>
  value === null ? '—' : typeof value === 'boolean' ? (value ? 'Yes' : 'No') : String(value);

/** Post-call analysis: the summary, whether the call succeeded, and the agent's analysis fields. */
function Analysis({ call }: { call: Call }) {
  const analysis = call.analysis;
  const custom = analysis ? Object.entries(analysis.custom) : [];
  return (
    <section class="card" id="analysis" aria-label="Analysis">
      <h2>Analysis</h2>
      {!analysis ? (
        <p class="muted">
          {call.answered_by === 'machine'
            ? 'No analysis: a machine answered (voicemail), so there was no conversation to analyse.'
            : !analysisExpected(call)
              ? 'No analysis: the call had no conversation.'
              : FINAL.has(call.status) && !recentlyEnded(call)
                ? 'No analysis: the post-call analysis did not come in.'
                : FINAL.has(call.status)
                  ? 'The analysis is not in yet.'
                  : 'The call is not over: it is analysed when it ends.'}
        </p>
      ) : (
        <>
          <p>{analysis.summary}</p>
          <dl class="facts">
            <dt>Successful</dt>
            <dd>{analysis.call_successful ? 'Yes' : 'No'}</dd>
            <dt>Caller sentiment</dt>
            <dd>
              {analysis.user_sentiment}{' '}
              <span class="hint">
                (judged from the whole conversation by{' '}
                {analysis.source === 'model' ? 'the model' : 'the rules'})
              </span>
            </dd>
            <dt>Analysed by</dt>
            <dd>{analysis.source === 'model' ? 'the model' : 'the rules (the model was not available)'}</dd>
            {custom.map(([name, value]) => [
              <dt key={`${name}-name`}>{name}</dt>,
              <dd key={name}>{valueText(value)}</dd>,
            ])}
          </dl>
        </>
      )}
    </section>
  );
}

/** The agent's tools as it used them during the conversation. */
function ToolCalls({ call }: { call: Call }) {
  return (
    <section class="card" aria-label="Tool calls">
      <h2>Tool calls</h2>
      {call.tool_calls.length === 0 ? (
        <p class="muted">No tool calls.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Tool calls</caption>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Arguments</th>
                <th scope="col">Result</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">HTTP status</th>
                <th scope="col">Duration</th>
                <th scope="col">At</th>
              </tr>
            </thead>
            <tbody>
              {call.tool_calls.map((tool, index) => (
                <tr key={index}>
                  <td data-label="Tool">{tool.name}</td>
                  <td data-label="Arguments">
                    <code class="arguments">{JSON.stringify(tool.arguments)}</code>
                  </td>
                  <td data-label="Result">
                    {tool.ok ? 'ok' : `failed${tool.error ? `: ${tool.error}` : ''}`}
                  </td>
                  <td data-label="Type">{tool.type ?? '—'}</td>
                  <td data-label="Status">{tool.status ?? (tool.ok ? 'ok' : 'error')}</td>
                  <td data-label="HTTP status">{tool.http_status ?? '—'}</td>
                  <td data-label="Duration">
                    {tool.duration_ms === undefined ? '—' : `${tool.duration_ms} ms`}
                  </td>
                  <td data-label="At">{when(tool.at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** How fast the agent answered, per turn: p50 and p90 of the whole, the model's part and ours. */
function Latency({ call }: { call: Call }) {
  const { latency } = call;
  const rows: [string, { p50: number | null; p90: number | null }][] = [
    ['Total (caller done → agent speaks)', latency.total_ms],
    ['Model (request → first token)', latency.model_ms],
    ['Service', latency.service_ms],
  ];
  return (
    <section class="card" aria-label="Latency">
      <h2>Latency</h2>
      {latency.turns === 0 ? (
        <p class="muted">No turns measured.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption>Over {latency.turns} turns</caption>
            <thead>
              <tr>
                <th scope="col">Part</th>
                <th scope="col">p50</th>
                <th scope="col">p90</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(([label, value]) => (
                <tr key={label}>
                  <td data-label="Part">{label}</td>
                  <td data-label="p50">{ms(value.p50)}</td>
                  <td data-label="p90">{ms(value.p90)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {call.conversation_incidents.length > 0 && (
        <>
          <h3>Incidents</h3>
          <ul>
            {call.conversation_incidents.map((incident, index) => (
              <li key={index}>
                {when(incident.at)}: <strong>{incident.kind}</strong> {incident.detail}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

const ENDED_BY: Record<NonNullable<Call['conversation_ended_by']>, string> = {
  agent_hangup: 'the agent',
  transfer: 'a transfer',
  caller_hangup: 'the caller',
  voicemail: 'a machine answering (voicemail)',
};

/**
 * The page's title: the other party ("Call from +61…" inbound, "Call to +61…" outbound); a test chat
 * has no phone on the other end.
 */
function title(call: Call): string {
  const other = call.remote_phone ?? (call.direction === 'inbound' ? call.from_phone : call.to_phone);
  if (call.channel === 'web') return `Test chat with ${call.agent_name}`;
  return call.direction === 'inbound' ? `Call from ${other}` : `Call to ${other}`;
}

const ANSWERED_BY: Record<Call['answered_by'], string> = {
  human: 'a person',
  machine: 'a machine (answering machine or voicemail)',
  unknown: '—',
};

const TRANSFER_STATUS: Record<NonNullable<NonNullable<Call['transfer']>['status']>, string> = {
  connected: 'connected',
  no_answer: 'not answered (the caller heard a short line and the call ended)',
  busy: 'busy (the caller heard a short line and the call ended)',
  failed: 'failed (the caller heard a short line and the call ended)',
};

/** The transfer the agent made: cold or warm, to whom, whether the person was connected, what they heard. */
function Transfer({ transfer }: { transfer: NonNullable<Call['transfer']> }) {
  return (
    <section class="card" aria-label="Transfer">
      <h2>Transfer</h2>
      <dl class="facts">
        <dt>Mode</dt>
        <dd>{transfer.mode === 'warm' ? 'warm (the person heard a summary first)' : 'cold'}</dd>
        <dt>To</dt>
        <dd>{transfer.to}</dd>
        <dt>Transfer status</dt>
        <dd>{transfer.status ? TRANSFER_STATUS[transfer.status] : 'dialling…'}</dd>
        {transfer.mode === 'warm' && (
          <>
            <dt>Summary</dt>
            <dd>{transfer.summary ?? '—'}</dd>
          </>
        )}
      </dl>
    </section>
  );
}

/** A call that is not there (or not in this workspace): said as such, with the way back; asking again would not help. */
function CallNotFound() {
  return (
    <section>
      <PageHeader title="Call not found" />
      <p class="state">
        No call with this id in this workspace. <a href="/calls">All calls</a>
      </p>
    </section>
  );
}

/**
 * The call's one sentiment: the post-call analysis's (the caller's, judged from the whole conversation),
 * else, until it is in, the word score of the caller's lines the pipeline computes first.
 */
function Sentiment({ call }: { call: Call }) {
  if (call.analysis) return <a href="#analysis">{call.analysis.user_sentiment} (the analysis's)</a>;
  const s = call.sentiment as { label?: unknown; score?: unknown } | null;
  if (s && typeof s === 'object' && typeof s.label === 'string')
    return (
      <>
        {s.label}{' '}
        <span class="hint">(a word score of the caller's lines; the analysis's judgement replaces it)</span>
      </>
    );
  return <>—</>;
}

/** A live call's Hang up (members): the call ends at the provider and here. */
function HangUp({ call }: { call: Call }) {
  const workspace_id = useWorkspaceId();
  const queries = useQueryClient();
  const hangup = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/calls/{call_id}/hangup', {
          params: { path: { workspace_id, call_id: call.id } },
        }),
      ),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['call', workspace_id, call.id] }),
  });
  return (
    <>
      <button type="button" class="danger" disabled={hangup.isPending} onClick={() => hangup.mutate()}>
        {hangup.isPending ? 'Hanging up…' : 'Hang up'}
      </button>
      <FormError error={hangup.error} />
    </>
  );
}

/** Its post-call webhook goes out after the call ends (and its analysis): asked again until then. */
function Deliveries({ callId, live }: { callId: string; live: boolean }) {
  return (
    <section class="card" aria-label="Webhook deliveries">
      <h2>Post-call webhook deliveries</h2>
      <DeliveriesTable
        filter={{ call_id: callId }}
        live={live}
        caption="Webhook deliveries"
        empty="No webhook deliveries for this call."
      />
    </section>
  );
}

export default function CallDetail() {
  const workspace_id = useWorkspaceId();
  const { params } = useRoute();
  const { canWrite } = useSession();
  const call = useQuery({
    queryKey: ['call', workspace_id, params.id],
    queryFn: () => loadCall(workspace_id, params.id),
    // Live until the call has ended and its recording and analysis are in.
    // A call that is not there (a 4xx) is not asked for again.
    refetchInterval: (query) =>
      (query.state.error instanceof ApiError && query.state.error.status < 500) ||
      (query.state.data && settled(query.state.data))
        ? false
        : 1000,
  });
  if (call.isPending) return <Loading />;
  if (call.isError && call.error instanceof ApiError && call.error.status === 404) return <CallNotFound />;
  if (call.isError) return <ErrorState error={call.error} retry={() => void call.refetch()} />;
  const c = call.data;
  return (
    <section class="call-page">
      <PageHeader title={title(c)}>{canWrite && !FINAL.has(c.status) && <HangUp call={c} />}</PageHeader>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge ${c.status}`} role="status" aria-label="Call status">
            {c.status}
          </span>
          {c.end_reason ? ` (${endReasonLabel(c.end_reason)})` : ''}
        </dd>
        <dt>Agent</dt>
        <dd>
          <a href={`/agents/${c.agent_id}`}>{c.agent_name}</a>
        </dd>
        <dt>Agent version</dt>
        <dd>
          {c.agent_version === null ? (
            '—'
          ) : (
            <a href={versionHref(c.agent_id, c.agent_version)}>Version {c.agent_version}</a>
          )}
        </dd>
        <dt>Direction</dt>
        <dd>{c.direction}</dd>
        <dt>From</dt>
        <dd>{c.from_phone}</dd>
        <dt>To</dt>
        <dd>{c.to_phone}</dd>
        <dt>Started</dt>
        <dd>{when(c.created_at)}</dd>
        <dt>Duration</dt>
        <dd>{c.duration_seconds === null ? '—' : `${c.duration_seconds} s`}</dd>
        <dt>Credits</dt>
        <dd>{c.credits ?? '—'}</dd>
        <dt>Ended by</dt>
        <dd>{c.conversation_ended_by ? ENDED_BY[c.conversation_ended_by] : '—'}</dd>
        <dt>Answered by</dt>
        <dd>{ANSWERED_BY[c.answered_by]}</dd>
        {c.answered_by === 'machine' && (
          <>
            <dt>Voicemail left</dt>
            <dd>{c.voicemail_message_left ? 'yes' : 'no'}</dd>
          </>
        )}
        {c.transferred_to && !c.transfer && (
          <>
            <dt>Transferred to</dt>
            <dd>{c.transferred_to}</dd>
          </>
        )}
        <dt>Sentiment</dt>
        <dd>
          <Sentiment call={c} />
        </dd>
      </dl>
      <details>
        <summary>Status history</summary>
        <ol>
          {c.status_history.map((entry, index) => (
            <li key={index}>
              {when(entry.at)}: {entry.status}
              {entry.end_reason ? ` (${entry.end_reason})` : ''}
            </li>
          ))}
        </ol>
      </details>
      {c.transfer && <Transfer transfer={c.transfer} />}
      <RecordingAndTranscript call={c} />
      <Analysis call={c} />
      <ToolCalls call={c} />
      <Latency call={c} />
      <Deliveries callId={c.id} live={!FINAL.has(c.status) || recentlyEnded(c)} />
    </section>
  );
}
