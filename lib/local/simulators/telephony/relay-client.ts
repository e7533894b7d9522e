import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import {
  SIGNATURE_HEADER,
  signTwilioRequest,
} from '../../../../functions/providers/telephony/twilio-format.js';

/**
 * ConversationRelay's client side, as Twilio is one. Two layers:
 *
 * - `RelayClient`, the socket: connects (the upgrade signed with `X-Twilio-Signature`, or not), keeps
 *   every frame it receives in order, hands them to listeners, and can wait for a condition on them.
 *   The tests use it as it is (raw frames, any signature), and every session below is one.
 * - `RelaySession`, a caller on it: opens the relay session of an answered call (signed over the relay
 *   URL, no parameters), sends `setup`, then the caller's lines as `prompt`s, one at a time, each after
 *   the agent's reply to the one before ended (`last: true`). It hangs up (closes the socket) after the
 *   agent's `end`, or after its last line once the agent has answered it. Used by the telephony
 *   simulator for every answered call, and by `npm run cli -- call talk` with a person typing the lines.
 */

/** A frame the relay sends. */
export interface RelayFrame {
  type: string;
  token?: string;
  last?: boolean;
  handoffData?: string;
  [key: string]: unknown;
}

export interface RelayConnectOptions {
  url: string;
  /** The upgrade's `X-Twilio-Signature`; false: none. */
  signature: string | false;
  /** False: frames go to the listeners only (a long session keeps no history). Default true. */
  keepFrames?: boolean;
}

export class RelayClient {
  readonly frames: RelayFrame[] = [];
  closed = false;
  closeCode: number | undefined;
  private waiters: (() => void)[] = [];
  private readonly frameListeners: ((frame: RelayFrame) => void)[] = [];
  private readonly goneListeners: ((cause: 'error' | 'close') => void)[] = [];

  private constructor(
    readonly socket: WebSocket,
    private readonly keepFrames: boolean,
  ) {
    socket.on('message', (data) => {
      let frame: RelayFrame;
      try {
        frame = JSON.parse(String(data)) as RelayFrame;
      } catch {
        frame = { type: 'not-json' };
      }
      if (this.keepFrames) this.frames.push(frame);
      for (const listener of this.frameListeners) listener(frame);
      this.wake();
    });
    socket.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      for (const listener of this.goneListeners) listener('close');
      this.wake();
    });
  }

  /** The signature Twilio gives the upgrade of a relay session: over the relay URL, no parameters. */
  static sign(authToken: string, url: string): string {
    return signTwilioRequest(authToken, url, {});
  }

  /** Connects; resolves with the HTTP status of a refused upgrade instead (0: no HTTP answer). */
  static connect(options: RelayConnectOptions): Promise<RelayClient | { refused: number }> {
    const { url, signature } = options;
    return new Promise((resolveConnect) => {
      const socket = new WebSocket(url, { headers: signature ? { [SIGNATURE_HEADER]: signature } : {} });
      let client: RelayClient | undefined;
      socket.once('unexpected-response', (_req, res) => resolveConnect({ refused: res.statusCode ?? 0 }));
      socket.once('error', () => {
        if (client) for (const listener of client.goneListeners) listener('error');
        resolveConnect({ refused: 0 });
      });
      socket.once('open', () => {
        client = new RelayClient(socket, options.keepFrames ?? true);
        resolveConnect(client);
      });
    });
  }

  /** Each frame received from now on. */
  onFrame(listener: (frame: RelayFrame) => void): void {
    this.frameListeners.push(listener);
  }

  /** The socket failed (`error`) or closed (`close`; a failure is followed by its close). */
  onGone(listener: (cause: 'error' | 'close') => void): void {
    this.goneListeners.push(listener);
  }

  private wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves once `ready()` holds over the frames (or the socket closed), at most `timeoutMs`. */
  async until<T>(
    ready: (frames: RelayFrame[]) => T | undefined,
    what: string,
    timeoutMs = 20_000,
  ): Promise<T> {
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
  async say(line: string): Promise<{ reply: string; frames: RelayFrame[] }> {
    const start = this.frames.length;
    this.send({ type: 'prompt', voicePrompt: line, lang: 'en-AU', last: true });
    return this.reply(start);
  }

  /** The reply among the frames from `start`: its text frames up to `last`. */
  async reply(start: number): Promise<{ reply: string; frames: RelayFrame[] }> {
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

export interface RelayCall {
  url: string;
  authToken: string;
  callSid: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound-api';
  /** `<Parameter>`s of the call's TwiML: `call_id`, `workspace_id`. */
  parameters: Record<string, string>;
}

export interface SpokenLine {
  role: 'agent' | 'user';
  text: string;
  /** Wall-clock ms when it was said (the agent's: its first piece). */
  at: number;
}

export type RelayEnd =
  | { kind: 'agent'; handoff: Record<string, unknown>; handoffData: string }
  | { kind: 'caller' }
  | { kind: 'refused'; status?: number }
  | { kind: 'dropped' };

export class RelaySession {
  readonly lines: SpokenLine[] = [];
  private client: RelayClient | undefined;
  private reply:
    { text: string; at?: number; done: () => void; onToken?: (token: string) => void } | undefined;
  private ended: RelayEnd | undefined;
  private readonly endWaiters: ((end: RelayEnd) => void)[] = [];
  /** Words the agent says unasked (a handoff's target speaks first): the line so far, and who listens. */
  private unasked: { text: string; at?: number } = { text: '' };
  private unaskedListener: ((token: string, last: boolean) => void) | undefined;

  constructor(private readonly call: RelayCall) {}

  /** Listens to what the agent says without being asked (a handoff's target speaks first). */
  onUnasked(listener: (token: string, last: boolean) => void): void {
    this.unaskedListener = listener;
  }

  /** Connects and sends `setup`; resolves false when the relay refused the upgrade. */
  async open(): Promise<boolean> {
    const client = await RelayClient.connect({
      url: this.call.url,
      signature: RelayClient.sign(this.call.authToken, this.call.url),
      keepFrames: false,
    });
    if (!(client instanceof RelayClient)) {
      this.finish({ kind: 'refused', status: client.refused || undefined });
      return false;
    }
    if (this.ended) {
      // Hung up while connecting: the session is not set up.
      client.close();
      return false;
    }
    this.client = client;
    client.onFrame((frame) => this.onFrame(frame));
    client.onGone((cause) =>
      this.finish(cause === 'error' ? { kind: 'refused' } : (this.ended ?? { kind: 'dropped' })),
    );
    client.send({
      type: 'setup',
      sessionId: `VX${randomBytes(16).toString('hex')}`,
      accountSid: `AC${'0'.repeat(32)}`,
      callSid: this.call.callSid,
      from: this.call.from,
      to: this.call.to,
      direction: this.call.direction,
      callType: 'PSTN',
      customParameters: this.call.parameters,
    });
    return true;
  }

  private onFrame(frame: RelayFrame): void {
    if (frame.type === 'text' && this.reply) {
      const token = frame.token ?? '';
      if (token !== '') {
        this.reply.at ??= Date.now();
        this.reply.text += token;
        this.reply.onToken?.(token);
      }
      if (frame.last) this.reply.done();
    } else if (frame.type === 'text') {
      const token = frame.token ?? '';
      if (token !== '') {
        this.unasked.at ??= Date.now();
        this.unasked.text += token;
      }
      this.unaskedListener?.(token, frame.last === true);
      if (frame.last) {
        const text = this.unasked.text.trim();
        if (text !== '') this.lines.push({ role: 'agent', text, at: this.unasked.at ?? Date.now() });
        this.unasked = { text: '' };
      }
    } else if (frame.type === 'end') {
      let handoff: Record<string, unknown> = {};
      try {
        handoff = JSON.parse(frame.handoffData ?? '{}') as Record<string, unknown>;
      } catch {
        handoff = {};
      }
      this.ended = { kind: 'agent', handoff, handoffData: frame.handoffData ?? '' };
      this.reply?.done();
      this.client?.close();
    }
  }

  private finish(end: RelayEnd): void {
    this.ended ??= end;
    this.reply?.done();
    for (const waiter of this.endWaiters.splice(0)) waiter(this.ended);
  }

  get isOver(): boolean {
    return this.ended !== undefined;
  }

  /** Waits until the relay has ended the session (or `ms` passed): the agent's `end`, or the socket closed. */
  waitForEnd(ms: number): Promise<RelayEnd | undefined> {
    if (this.ended) return Promise.resolve(this.ended);
    return new Promise((resolveEnd) => {
      const timer = setTimeout(() => resolveEnd(undefined), ms);
      this.endWaiters.push((end) => {
        clearTimeout(timer);
        resolveEnd(end);
      });
    });
  }

  /**
   * Says a line and waits for the agent's whole reply (its `last`), at most `timeoutMs`. Resolves to
   * the reply ('' when none came). `onToken` sees each piece as it arrives.
   */
  say(line: string, options: { timeoutMs: number; onToken?: (token: string) => void }): Promise<string> {
    if (this.ended || !this.client) return Promise.resolve('');
    this.lines.push({ role: 'user', text: line, at: Date.now() });
    return new Promise((resolveReply) => {
      const timer = setTimeout(() => current.done(), options.timeoutMs);
      const current = {
        text: '',
        at: undefined as number | undefined,
        onToken: options.onToken,
        done: () => {
          clearTimeout(timer);
          if (this.reply !== current) return;
          this.reply = undefined;
          const reply = current.text.trim();
          if (reply !== '') this.lines.push({ role: 'agent', text: reply, at: current.at ?? Date.now() });
          resolveReply(reply);
        },
      };
      this.reply = current;
      this.client!.send({ type: 'prompt', voicePrompt: line, lang: 'en-AU', last: true });
    });
  }

  /** Sends a key press (`dtmf`) and waits for the agent's reply. */
  press(digit: string, options: { timeoutMs: number }): Promise<string> {
    if (this.ended || !this.client) return Promise.resolve('');
    this.client.send({ type: 'dtmf', digit });
    return new Promise((resolveReply) => {
      const timer = setTimeout(() => current.done(), options.timeoutMs);
      const current = {
        text: '',
        at: undefined as number | undefined,
        done: () => {
          clearTimeout(timer);
          if (this.reply !== current) return;
          this.reply = undefined;
          resolveReply(current.text.trim());
        },
      };
      this.reply = current;
    });
  }

  /** The caller hangs up. */
  hangUp(): void {
    this.ended ??= { kind: 'caller' };
    this.client?.close();
  }
}
