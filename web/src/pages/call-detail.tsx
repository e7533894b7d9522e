import { useEffect, useRef, useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { accessToken, api, ok } from '../api/client';
import { config } from '../config';
import { ErrorState, FormError, Loading, PageHeader, PagedTable, when } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

const FINAL = new Set(['completed', 'failed']);

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

/** The audio player and the transcript; the turn being heard is highlighted; a click on a turn seeks to it. */
function RecordingAndTranscript({ call }: { call: Call }) {
  const recording = useRecording(call);
  const audio = useRef<HTMLAudioElement>(null);
  const [time, setTime] = useState(0);
  const turns = call.transcript;
  const current = turns.reduce(
    (found, turn, index) => (turn.offset_seconds <= time + 0.05 ? index : found),
    -1,
  );
  return (
    <section class="card" aria-label="Recording and transcript">
      <h2>Recording</h2>
      {!call.recording_available && <p class="muted">No recording.</p>}
      {recording.error && <p role="alert">{recording.error}</p>}
      {call.recording_available && !recording.src && !recording.error && (
        <p role="status">Loading the recording…</p>
      )}
      {recording.src && (
        <audio
          ref={audio}
          controls
          src={recording.src}
          aria-label="Call recording"
          onTimeUpdate={(e) => setTime(e.currentTarget.currentTime)}
          onSeeked={(e) => setTime(e.currentTarget.currentTime)}
        />
      )}
      <h2>Transcript</h2>
      {turns.length === 0 ? (
        <p class="muted">No transcript.</p>
      ) : (
        <ol class="transcript">
          {turns.map((turn, index) => (
            <li
              key={index}
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
                {Math.floor(turn.offset_seconds / 60)}:
                {String(Math.floor(turn.offset_seconds % 60)).padStart(2, '0')}
              </button>{' '}
              <span class="who">{turn.role === 'agent' ? 'Agent' : 'Caller'}</span> {turn.text}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Deliveries({ callId }: { callId: string }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const resend = useMutation({
    mutationFn: (delivery_id: string) =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/webhook-deliveries/{delivery_id}/resend', {
          params: { path: { workspace_id, delivery_id } },
        }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['deliveries', workspace_id, callId] }),
  });
  return (
    <section class="card" aria-label="Webhook deliveries">
      <h2>Post-call webhook deliveries</h2>
      <FormError error={resend.error} />
      <PagedTable
        caption="Webhook deliveries"
        queryKey={['deliveries', workspace_id, callId]}
        rowKey={(d) => d.id}
        empty="No webhook deliveries for this call."
        fetchPage={(cursor?: string) =>
          ok(
            api().GET('/api/v1/workspaces/{workspace_id}/webhook-deliveries', {
              params: { path: { workspace_id }, query: { cursor, call_id: callId } },
            }),
          )
        }
        columns={[
          { label: 'URL', render: (d) => d.url },
          { label: 'State', render: (d) => d.state },
          { label: 'Attempts', render: (d) => d.attempts.length },
          {
            label: 'Actions',
            render: (d) =>
              canWrite ? (
                <button type="button" onClick={() => resend.mutate(d.id)} disabled={resend.isPending}>
                  Resend
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}

export default function CallDetail() {
  const workspace_id = useWorkspaceId();
  const { params } = useRoute();
  const call = useQuery({
    queryKey: ['call', workspace_id, params.id],
    queryFn: () => loadCall(workspace_id, params.id),
    // Live until the call has ended and its recording is in.
    refetchInterval: (query) => {
      const data = query.state.data;
      return data && FINAL.has(data.status) && (data.recording_available || !data.record) ? false : 1000;
    },
  });
  if (call.isPending) return <Loading />;
  if (call.isError) return <ErrorState error={call.error} retry={() => void call.refetch()} />;
  const c = call.data;
  return (
    <section>
      <PageHeader title={`Call to ${c.to_phone}`} />
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge ${c.status}`} role="status" aria-label="Call status">
            {c.status}
          </span>
          {c.end_reason ? ` (${c.end_reason})` : ''}
        </dd>
        <dt>Agent</dt>
        <dd>
          <a href={`/agents/${c.agent_id}`}>{c.agent_name}</a>
        </dd>
        <dt>Direction</dt>
        <dd>{c.direction}</dd>
        <dt>From</dt>
        <dd>{c.from_phone}</dd>
        <dt>Started</dt>
        <dd>{when(c.created_at)}</dd>
        <dt>Duration</dt>
        <dd>{c.duration_seconds === null ? '—' : `${c.duration_seconds} s`}</dd>
        <dt>Credits</dt>
        <dd>{c.credits ?? '—'}</dd>
        <dt>Sentiment</dt>
        <dd>
          {c.sentiment === null || c.sentiment === undefined
            ? '—'
            : typeof c.sentiment === 'object'
              ? JSON.stringify(c.sentiment)
              : String(c.sentiment)}
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
      <RecordingAndTranscript call={c} />
      <Deliveries callId={c.id} />
    </section>
  );
}
