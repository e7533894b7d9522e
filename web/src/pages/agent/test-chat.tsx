import { useEffect, useRef, useState } from 'preact/hooks';
import { accessToken } from '../../api/client';
import { config } from '../../config';

/** One line of the test chat: the user's, the agent's (streaming until `done`), or a tool the agent used. */
type Line =
  | { kind: 'user'; text: string }
  | { kind: 'agent'; text: string; done: boolean }
  | { kind: 'tool'; name: string; args: string; ok: boolean }
  | { kind: 'note'; text: string };

type RelayMessage =
  | { type: 'session'; call_id: string }
  | { type: 'text'; token: string; last: boolean }
  | { type: 'tool'; name: string; arguments?: unknown; ok?: boolean }
  | { type: 'end' };

/** The relay's test-chat URL: the user's token in the query (a browser cannot set a WebSocket's headers). */
export function testChatUrl(relayUrl: string, workspaceId: string, agentId: string, token: string): string {
  const url = new URL(relayUrl);
  url.searchParams.set('channel', 'web');
  url.searchParams.set('workspace_id', workspaceId);
  url.searchParams.set('agent_id', agentId);
  url.searchParams.set('access_token', token);
  return url.href;
}

/**
 * Talks to the agent through the same engine as a phone call: a WebSocket session on the relay. The
 * reply streams in token by token; tools the agent used are shown inline. Closing hangs up; the
 * session is in the call log as a call with channel "web".
 */
export function TestChat({
  workspaceId,
  agentId,
  onClose,
}: {
  workspaceId: string;
  agentId: string;
  onClose: () => void;
}) {
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState<'connecting' | 'open' | 'ended' | 'failed'>('connecting');
  const [callId, setCallId] = useState<string>();
  const [draft, setDraft] = useState('');
  const socket = useRef<WebSocket>();
  const relayUrl = config().relay_url;

  useEffect(() => {
    const token = accessToken();
    if (!relayUrl || !token) {
      setState('failed');
      return;
    }
    const ws = new WebSocket(testChatUrl(relayUrl, workspaceId, agentId, token));
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
        setLines((current) => {
          const last = current[current.length - 1];
          if (last && last.kind === 'agent' && !last.done)
            return [
              ...current.slice(0, -1),
              { kind: 'agent', text: last.text + message.token, done: message.last },
            ];
          return [...current, { kind: 'agent', text: message.token, done: message.last }];
        });
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
        setLines((current) => [...current, { kind: 'note', text: 'The agent ended the conversation.' }]);
        setState('ended');
      }
    };
    ws.onerror = () => setState((current) => (current === 'connecting' ? 'failed' : current));
    ws.onclose = () => setState((current) => (current === 'failed' ? current : 'ended'));
    return () => ws.close();
  }, [relayUrl, workspaceId, agentId]);

  const send = () => {
    const text = draft.trim();
    if (!text || state !== 'open') return;
    socket.current?.send(JSON.stringify({ type: 'prompt', voicePrompt: text, last: true }));
    setLines((current) => [...current, { kind: 'user', text }]);
    setDraft('');
  };

  return (
    <section class="card test-chat" aria-label="Test chat">
      <header class="row">
        <h2>Test chat</h2>
        <span role="status" class="muted">
          {state === 'connecting' && 'Connecting…'}
          {state === 'open' && 'Connected'}
          {state === 'ended' && 'Ended'}
          {state === 'failed' &&
            (relayUrl
              ? 'Could not connect to the agent.'
              : 'Test chat is not available here: the voice relay is not running.')}
        </span>
        {callId && (
          <a href={`/calls/${callId}`} class="muted">
            Call {callId}
          </a>
        )}
        <button
          type="button"
          onClick={() => {
            socket.current?.close();
            onClose();
          }}
        >
          Hang up
        </button>
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
      <form
        class="row"
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
    </section>
  );
}
