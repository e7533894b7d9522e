import { useEffect, useRef, useState } from 'preact/hooks';
import { useMutation } from '@tanstack/preact-query';
import { api, ApiError, ok } from '../../api/client';
import { FormError } from '../../components/ui';
import { config } from '../../config';
import { allDone, withToken, type Line } from './chat-lines';

type RelayMessage =
  | { type: 'session'; call_id: string }
  | { type: 'text'; token: string; last: boolean }
  | { type: 'tool'; name: string; arguments?: unknown; ok?: boolean }
  | { type: 'end' };

interface ParameterRow {
  name: string;
  value: string;
}

/** The relay's test-chat URL: the one-time ticket in the query (never the user's token). */
export function testChatUrl(relayUrl: string, ticket: string): string {
  const url = new URL(relayUrl);
  url.searchParams.set('channel', 'web');
  url.searchParams.set('ticket', ticket);
  return url.href;
}

/**
 * Talks to the agent through the same engine as a phone call. First the chat's parameters (name and
 * value rows, filled into the agent's prompt as a call's), whether its post-call actions run and, for
 * an agent with versions, which version it runs (the current one, or an earlier one to compare); then
 * a one-time ticket is bought with the user's token (POST …/test-chat: a 422 shows here) and the
 * relay's WebSocket opened with it. The reply streams in token by token; tools the agent used are shown
 * inline. Hang up ends the session; once it ended, Close removes the chat. The session is in the call
 * log as a call with channel "web".
 */
export function TestChat({
  workspaceId,
  agentId,
  currentVersion,
  onClose,
}: {
  workspaceId: string;
  agentId: string;
  /** The agent's version now: earlier ones can be picked (versions are numbered from 1, one a save). */
  currentVersion?: number | null;
  onClose: () => void;
}) {
  const [rows, setRows] = useState<ParameterRow[]>([{ name: '', value: '' }]);
  const [runActions, setRunActions] = useState(false);
  /** '' is the current version. */
  const [version, setVersion] = useState('');
  const [ticket, setTicket] = useState<{ ticket: string; relay_url: string }>();
  const relayUrl = config().relay_url;

  const buy = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/test-chat', {
          params: { path: { workspace_id: workspaceId, agent_id: agentId } },
          body: {
            parameters: Object.fromEntries(
              rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]),
            ),
            run_post_call_actions: runActions,
            agent_version: version ? Number(version) : undefined,
          },
        }),
      ),
    onSuccess: (bought) => setTicket(bought),
  });

  if (ticket)
    return (
      <ChatSession
        ticket={ticket.ticket}
        relayUrl={ticket.relay_url}
        version={version ? Number(version) : undefined}
        onClose={onClose}
      />
    );

  // An edit clears the last refusal: its messages were about the rows as they were.
  const edit = (change: (current: ParameterRow[]) => ParameterRow[]) => {
    if (buy.error) buy.reset();
    setRows(change);
  };
  const setRow = (index: number, change: Partial<ParameterRow>) =>
    edit((current) => current.map((row, i) => (i === index ? { ...row, ...change } : row)));
  const parameterErrors = buy.error instanceof ApiError ? buy.error.fieldMessages('parameters', true) : [];

  return (
    <section class="card test-chat" aria-label="Test chat">
      <header class="row">
        <h2>Test chat</h2>
      </header>
      {!relayUrl ? (
        <p role="status" class="muted">
          Test chat is not available here: the voice relay is not running.
        </p>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            buy.mutate();
          }}
        >
          <fieldset>
            <legend>Parameters</legend>
            <p class="hint">Filled into the agent's prompt and greeting, as a call's parameters are.</p>
            {rows.map((row, index) => (
              <div class="row parameter-row" key={index}>
                <input
                  aria-label={`Parameter ${index + 1} name`}
                  placeholder="name"
                  value={row.name}
                  onInput={(e) => setRow(index, { name: e.currentTarget.value })}
                />
                <input
                  aria-label={`Parameter ${index + 1} value`}
                  placeholder="value"
                  value={row.value}
                  onInput={(e) => setRow(index, { value: e.currentTarget.value })}
                />
                <button
                  type="button"
                  aria-label={`Remove parameter ${index + 1}`}
                  onClick={() =>
                    edit((current) =>
                      current.length > 1 ? current.filter((_, i) => i !== index) : [{ name: '', value: '' }],
                    )
                  }
                >
                  Remove
                </button>
              </div>
            ))}
            <button type="button" onClick={() => edit((current) => [...current, { name: '', value: '' }])}>
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
          {currentVersion !== undefined && currentVersion !== null && currentVersion > 1 && (
            <label>
              Version
              <select value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
                <option value="">Current (version {currentVersion})</option>
                {Array.from({ length: currentVersion - 1 }, (_, i) => currentVersion - 1 - i).map((n) => (
                  <option key={n} value={String(n)}>
                    Version {n}
                  </option>
                ))}
              </select>
            </label>
          )}
          <FormError error={buy.error} />
          <div class="buttons">
            <button type="submit" class="primary" disabled={buy.isPending}>
              Start chat
            </button>
            <button type="button" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** The chat itself: the relay's WebSocket opened with the ticket. */
function ChatSession({
  ticket,
  relayUrl,
  version,
  onClose,
}: {
  ticket: string;
  relayUrl: string;
  /** An earlier version picked (undefined: the current one). */
  version: number | undefined;
  onClose: () => void;
}) {
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState<'connecting' | 'open' | 'ended' | 'failed'>('connecting');
  const [callId, setCallId] = useState<string>();
  const [draft, setDraft] = useState('');
  const socket = useRef<WebSocket>();

  useEffect(() => {
    const ws = new WebSocket(testChatUrl(relayUrl, ticket));
    socket.current = ws;
    ws.onopen = () => {
      setState('open');
      ws.send(JSON.stringify({ type: 'start' }));
    };
    ws.onmessage = (event) => {
      let message: RelayMessage;
      try {
        message = JSON.parse(String(event.data)) as RelayMessage;
      } catch {
        return;
      }
      if (message.type === 'session') setCallId(message.call_id);
      else if (message.type === 'text')
        setLines((current) => withToken(current, message.token, message.last));
      else if (message.type === 'tool')
        setLines((current) => [
          ...current,
          {
            kind: 'tool',
            name: message.name,
            args: JSON.stringify(message.arguments ?? {}),
            ok: message.ok !== false,
          },
        ]);
      else if (message.type === 'end') {
        setLines((current) => [
          ...allDone(current),
          { kind: 'note', text: 'The agent ended the conversation.' },
        ]);
        setState('ended');
      }
    };
    ws.onerror = () => setState((current) => (current === 'connecting' ? 'failed' : current));
    ws.onclose = () => {
      setLines(allDone);
      setState((current) => (current === 'connecting' || current === 'failed' ? 'failed' : 'ended'));
    };
    return () => ws.close();
  }, [relayUrl, ticket]);

  const send = () => {
    const text = draft.trim();
    if (!text || state !== 'open') return;
    socket.current?.send(JSON.stringify({ type: 'prompt', voicePrompt: text, last: true }));
    setLines((current) => [...current, { kind: 'user', text }]);
    setDraft('');
  };
  const live = state === 'connecting' || state === 'open';

  return (
    <section class="card test-chat" aria-label="Test chat">
      <header class="row">
        <h2>Test chat{version !== undefined && ` · version ${version}`}</h2>
        <span role="status" class="muted">
          {state === 'connecting' && 'Connecting…'}
          {state === 'open' && 'Connected'}
          {state === 'ended' && 'Ended'}
          {state === 'failed' && 'Could not connect to the agent.'}
        </span>
        {callId && (
          <a href={`/calls/${callId}`} class="muted">
            Call {callId}
          </a>
        )}
        {live ? (
          <button type="button" onClick={() => socket.current?.close()}>
            Hang up
          </button>
        ) : (
          <button type="button" onClick={onClose}>
            Close
          </button>
        )}
      </header>
      <ol class="chat" aria-live="polite" aria-label="Conversation">
        {lines.map((line, index) => (
          <li key={index} class={`chat-${line.kind}`}>
            {line.kind === 'user' && (
              <>
                <span class="who">You</span> {line.text}
              </>
            )}
            {line.kind === 'agent' && (
              <>
                <span class="who">Agent</span> {line.text}
                {!line.done && (
                  <span class="typing" aria-hidden="true">
                    …
                  </span>
                )}
              </>
            )}
            {line.kind === 'tool' && (
              <>
                <span class="who">Tool</span>{' '}
                <code>
                  {line.name}({line.args})
                </code>{' '}
                {line.ok ? 'ok' : 'failed'}
              </>
            )}
            {line.kind === 'note' && <em>{line.text}</em>}
          </li>
        ))}
      </ol>
      {state !== 'ended' && state !== 'failed' && (
        <form
          class="row chat-form"
          onSubmit={(event) => {
            event.preventDefault();
            send();
          }}
        >
          <label for="chat-message" class="visually-hidden">
            Message
          </label>
          <input
            id="chat-message"
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
            disabled={state !== 'open'}
            placeholder="Say something to the agent"
          />
          <button type="submit" class="primary" disabled={state !== 'open'}>
            Send
          </button>
        </form>
      )}
    </section>
  );
}
