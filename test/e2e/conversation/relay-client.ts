import WebSocket from 'ws';
import { CallEntity } from '../../../functions/calling/entities.js';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { ws, type Tenant } from '../calling/fixtures.js';

/** The simulator's scenario whose relay session is left to an outside client (the test). */
export const EXTERNAL_RELAY_NUMBER = '+61491570116';

export const relayUrl = (): string => stackState().voice_relay_url;
export const authToken = (): string => stackState().env.TELEPHONY_AUTH_TOKEN;

export interface Frame {
  type: string;
  token?: string;
  last?: boolean;
  handoffData?: string;
  [key: string]: unknown;
}

/**
 * A raw ConversationRelay client for tests: every frame it receives is kept in order, and it can wait
 * for a condition on them. `signature` false: no X-Twilio-Signature; a string: that one.
 */
export class TestRelay {
  readonly frames: Frame[] = [];
  closed = false;
  closeCode: number | undefined;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      try {
        this.frames.push(JSON.parse(String(data)) as Frame);
      } catch {
        this.frames.push({ type: 'not-json' });
      }
      this.wake();
    });
    socket.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      this.wake();
    });
  }

  private wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Connects; resolves with the HTTP status of a refused upgrade instead. */
  static connect(
    options: { signature?: string | false; url?: string } = {},
  ): Promise<TestRelay | { refused: number }> {
    const url = options.url ?? relayUrl();
    const signature =
      options.signature === undefined ? signTwilioRequest(authToken(), relayUrl(), {}) : options.signature;
    return new Promise((resolveConnect) => {
      const socket = new WebSocket(url, { headers: signature ? { [SIGNATURE_HEADER]: signature } : {} });
      socket.once('unexpected-response', (_req, res) => resolveConnect({ refused: res.statusCode ?? 0 }));
      socket.once('error', () => resolveConnect({ refused: 0 }));
      socket.once('open', () => resolveConnect(new TestRelay(socket)));
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  setup(call: { providerCallId: string; callId: string; workspaceId: string }): void {
    this.send({
      type: 'setup',
      sessionId: 'VX0000',
      callSid: call.providerCallId,
      from: '+61491570199',
      to: '+61255500000',
      direction: 'outbound-api',
      customParameters: { call_id: call.callId, workspace_id: call.workspaceId },
    });
  }

  /** Resolves once `ready()` holds over the frames (or the socket closed), at most `timeoutMs`. */
  async until<T>(ready: (frames: Frame[]) => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = ready(this.frames);
      if (result !== undefined) return result;
      if (this.closed) throw new Error(`socket closed while waiting for ${what}`);
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolveWait) => {
        const timer = setTimeout(resolveWait, deadline - Date.now());
        this.waiters.push(() => {
          clearTimeout(timer);
          resolveWait();
        });
      });
    }
  }

  /** Says a line and returns the agent's whole reply (the text frames after it, up to `last`). */
  async say(line: string): Promise<{ reply: string; frames: Frame[] }> {
    const start = this.frames.length;
    this.send({ type: 'prompt', voicePrompt: line, lang: 'en-AU', last: true });
    return this.reply(start);
  }

  async reply(start: number): Promise<{ reply: string; frames: Frame[] }> {
    const frames = await this.until((all) => {
      const mine = all.slice(start);
      return mine.some((f) => f.type === 'text' && f.last) ? mine : undefined;
    }, 'the reply');
    const upTo = frames.findIndex((f) => f.type === 'text' && f.last);
    const texts = frames.slice(0, upTo + 1).filter((f) => f.type === 'text');
    return {
      reply: texts
        .map((f) => f.token ?? '')
        .join('')
        .trim(),
      frames,
    };
  }

  waitClosed(timeoutMs = 20_000): Promise<true> {
    return this.until(() => (this.closed ? true : undefined), 'the socket to close', timeoutMs).catch(
      (error) => {
        if (this.closed) return true;
        throw error;
      },
    ) as Promise<true>;
  }

  close(): void {
    this.socket.close(1000);
  }
}

/** Places a call to the external-relay scenario and waits until the provider named it. */
export async function liveCall(
  tenant: Tenant,
  agentId: string,
  parameters: Record<string, string> = {},
): Promise<{ callId: string; providerCallId: string; workspaceId: string }> {
  const started = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: EXTERNAL_RELAY_NUMBER, parameters },
  });
  if (started.status !== 201) throw new Error(`start-call: ${started.status} ${started.text}`);
  const callId = started.body.id as string;
  const providerCallId = await waitFor(
    async () => {
      const res = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
      const call = res.body as Json;
      return call.provider_call_id && call.status === 'inprogress'
        ? (call.provider_call_id as string)
        : undefined;
    },
    { what: 'the call to be answered', timeoutMs: 20_000, intervalMs: 100 },
  );
  return { callId, providerCallId, workspaceId: tenant.workspaceId };
}

/** The call as stored (what a refused session must not have changed). */
export async function storedCall(workspaceId: string, callId: string) {
  const { data } = await CallEntity.get({ workspaceId, callId }).go({ consistent: true });
  return data;
}

/** Opens a session for a live call and waits for its setup to be recorded. */
export async function openSession(call: { providerCallId: string; callId: string; workspaceId: string }) {
  const relay = await TestRelay.connect();
  if (!(relay instanceof TestRelay)) throw new Error(`relay refused: ${relay.refused}`);
  relay.setup(call);
  await waitFor(
    async () => ((await storedCall(call.workspaceId, call.callId))?.relayConnectionId ? true : undefined),
    {
      what: 'the session to be set up',
      timeoutMs: 10_000,
      intervalMs: 50,
    },
  );
  return relay;
}

/** What Twilio does after the agent's `end`: asks the <Connect action>, and hangs up unless it dials. */
export async function providerEndsSession(providerCallId: string): Promise<{ dialled: string | null }> {
  const state = stackState();
  const res = await fetch(`${state.env.TELEPHONY_SIMULATOR_URL}/calls/${providerCallId}/relay-ended`, {
    method: 'POST',
    headers: { authorization: `Bearer ${state.env.TELEPHONY_AUTH_TOKEN}` },
  });
  if (res.status !== 200) throw new Error(`simulator relay-ended: ${res.status}`);
  return (await res.json()) as { dialled: string | null };
}
