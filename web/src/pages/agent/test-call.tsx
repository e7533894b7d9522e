import { useEffect, useRef, useState } from 'preact/hooks';
import { useMutation } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ApiError, ok } from '../../api/client';
import { FormError } from '../../components/ui';
import { BrowserSpeechCall, speechRecognition } from './browser-speech-call';
import type { CallDriver, CallStatus } from './call-driver';
import { TestChat } from './test-chat';

/**
 * The agent page's Test call (loaded when opened): talk to the agent by voice in the browser. First the
 * call's parameters and the post-call choice; then POST …/web-call creates the call and says how to
 * connect it: `browser` (the page's own speech recognition and synthesis over the relay's web route:
 * browser-speech-call.ts) or `twilio` (Twilio's Voice SDK, loaded only then: twilio-call.ts). Then
 * Connecting, Connected with a timer, both sides' words as they come (the caller's interim words
 * greyed), Mute, End call and the microphone's level. When the call ends, it opens in Calls. A browser
 * without speech recognition (Firefox) is told so and offered the test chat.
 */

interface ParameterRow {
  name: string;
  value: string;
}

interface Line {
  who: 'caller' | 'agent';
  text: string;
  done: boolean;
}

interface Started {
  call_id: string;
  transport: 'twilio' | 'browser';
  token?: string;
  ticket?: string;
  relay_url?: string;
}

export default function TestCall({
  workspaceId,
  agentId,
  language,
  interruptible,
  onClose,
}: {
  workspaceId: string;
  agentId: string;
  language: string;
  interruptible: boolean;
  onClose: () => void;
}) {
  const [rows, setRows] = useState<ParameterRow[]>([{ name: '', value: '' }]);
  const [runActions, setRunActions] = useState(false);
  const [started, setStarted] = useState<Started>();
  const [chat, setChat] = useState(false);

  const start = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/web-call', {
          params: { path: { workspace_id: workspaceId, agent_id: agentId } },
          body: {
            parameters: Object.fromEntries(
              rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]),
            ),
            run_post_call_actions: runActions,
          },
        }),
      ),
    onSuccess: (body) => setStarted(body),
  });

  if (chat) return <TestChat workspaceId={workspaceId} agentId={agentId} onClose={onClose} />;
  if (started)
    return (
      <CallSession started={started} language={language} interruptible={interruptible} onClose={onClose} />
    );

  const canSpeak = speechRecognition() !== undefined;
  const setRow = (index: number, change: Partial<ParameterRow>) => {
    if (start.error) start.reset();
    setRows((current) => current.map((row, i) => (i === index ? { ...row, ...change } : row)));
  };
  const parameterErrors =
    start.error instanceof ApiError ? start.error.fieldMessages('parameters', true) : [];

  return (
    <section class="card test-chat" aria-label="Test call">
      <header class="row">
        <h2>Test call</h2>
      </header>
      {!canSpeak && (
        <p role="status">
          This browser has no speech recognition (Firefox has none), so it cannot talk to the agent here: use
          Chrome, Edge or Safari, or type to the agent in the test chat.{' '}
          <button type="button" onClick={() => setChat(true)}>
            Open test chat
          </button>
        </p>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          start.mutate();
        }}
      >
        <fieldset>
          <legend>Parameters</legend>
          <p class="hint">Filled into the agent's prompt and greeting, as a call's parameters are.</p>
          {rows.map((row, index) => (
            <div class="row parameter-row" key={index}>
              <input
                aria-label={`Call parameter ${index + 1} name`}
                placeholder="name"
                value={row.name}
                onInput={(e) => setRow(index, { name: e.currentTarget.value })}
              />
              <input
                aria-label={`Call parameter ${index + 1} value`}
                placeholder="value"
                value={row.value}
                onInput={(e) => setRow(index, { value: e.currentTarget.value })}
              />
            </div>
          ))}
          <button type="button" onClick={() => setRows((current) => [...current, { name: '', value: '' }])}>
            Add parameter
          </button>
          {parameterErrors.length > 0 && <small class="field-error">{parameterErrors.join(' ')}</small>}
        </fieldset>
        <label class="check">
          <input
            type="checkbox"
            checked={runActions}
            onChange={(e) => setRunActions(e.currentTarget.checked)}
          />
          Run post-call actions
        </label>
        <p class="hint">The browser asks for your microphone when the call starts.</p>
        <FormError error={start.error} />
        <div class="buttons">
          <button type="submit" class="primary" disabled={start.isPending || !canSpeak}>
            Start test call
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;

/** The call itself, through the transport the service chose. */
function CallSession({
  started,
  language,
  interruptible,
  onClose,
}: {
  started: Started;
  language: string;
  interruptible: boolean;
  onClose: () => void;
}) {
  const { route } = useLocation();
  const [status, setStatus] = useState<CallStatus>('connecting');
  const [detail, setDetail] = useState<string>();
  const [lines, setLines] = useState<Line[]>([]);
  const [interim, setInterim] = useState('');
  const [level, setLevel] = useState(0);
  const [muted, setMuted] = useState(false);
  const [connectedAt, setConnectedAt] = useState<number>();
  const [now, setNow] = useState(Date.now());
  const driver = useRef<CallDriver>();

  useEffect(() => {
    let cancelled = false;
    const events = {
      status: (next: CallStatus, why?: string) => {
        if (cancelled) return;
        setStatus(next);
        setDetail(why);
        if (next === 'connected') setConnectedAt(Date.now());
      },
      line: (who: Line['who'], text: string, done: boolean) =>
        !cancelled &&
        setLines((current) => {
          const tail = current[current.length - 1];
          if (tail && tail.who === who && !tail.done) return [...current.slice(0, -1), { who, text, done }];
          return [...current, { who, text, done }];
        }),
      interim: (text: string) => !cancelled && setInterim(text),
      level: (value: number) => !cancelled && setLevel(value),
    };
    void (async () => {
      try {
        const next: CallDriver =
          started.transport === 'twilio'
            ? new (await import('./twilio-call')).TwilioCall(
                { token: started.token ?? '', callId: started.call_id },
                events,
              )
            : new BrowserSpeechCall(
                {
                  relayUrl: started.relay_url ?? '',
                  ticket: started.ticket ?? '',
                  language,
                  interruptible,
                },
                events,
              );
        if (cancelled) return;
        driver.current = next;
        await next.start();
      } catch (error) {
        events.status(
          'failed',
          error instanceof DOMException && error.name === 'NotAllowedError'
            ? 'The microphone is blocked: allow it for this site and start again.'
            : error instanceof Error
              ? error.message
              : 'The call could not start.',
        );
      }
    })();
    return () => {
      cancelled = true;
      driver.current?.end();
    };
  }, [started, language, interruptible]);

  useEffect(() => {
    if (status !== 'connected') return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [status]);

  // Ended: the call opens in Calls.
  useEffect(() => {
    if (status === 'ended') route(`/calls/${started.call_id}`);
  }, [status, started.call_id, route]);

  const seconds = connectedAt ? Math.max(0, Math.floor((now - connectedAt) / 1000)) : 0;
  const live = status === 'connecting' || status === 'connected';

  return (
    <section class="card test-chat" aria-label="Test call">
      <header class="row">
        <h2>Test call</h2>
        <span role="status" class="muted">
          {status === 'connecting' && 'Connecting'}
          {status === 'connected' && 'Connected'}
          {status === 'ended' && 'Ended'}
          {status === 'failed' && (detail ?? 'The call failed.')}
        </span>
        {status === 'connected' && (
          <time aria-label="Call time" class="muted">
            {clock(seconds)}
          </time>
        )}
        <meter aria-label="Microphone level" min={0} max={1} value={muted ? 0 : level} />
        {live ? (
          <>
            <button
              type="button"
              aria-pressed={muted}
              onClick={() => {
                driver.current?.setMuted(!muted);
                setMuted(!muted);
              }}
            >
              {muted ? 'Unmute' : 'Mute'}
            </button>
            <button type="button" class="danger" onClick={() => driver.current?.end()}>
              End call
            </button>
          </>
        ) : (
          <>
            <a href={`/calls/${started.call_id}`}>Open in Calls</a>
            <button type="button" onClick={onClose}>
              Close
            </button>
          </>
        )}
      </header>
      <ol class="chat" aria-live="polite" aria-label="Transcript">
        {lines.map((line, index) => (
          <li key={index} class={`chat-${line.who === 'caller' ? 'user' : 'agent'}`}>
            <span class="who">{line.who === 'caller' ? 'You' : 'Agent'}</span> {line.text}
          </li>
        ))}
        {interim && (
          <li class="chat-user interim" aria-label="Still listening">
            <span class="who">You</span> {interim}
          </li>
        )}
      </ol>
      {started.transport === 'twilio' && (
        <p class="hint">
          You hear the agent's own voice through Twilio; the words are in the call's transcript once it ends.
        </p>
      )}
    </section>
  );
}
