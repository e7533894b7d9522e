import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import {
  SIGNATURE_HEADER,
  signTwilioRequest,
} from '../../../../functions/providers/telephony/twilio-format.js';

/**
 * A ConversationRelay client, as Twilio is one: it opens the relay session of an answered call (the
 * upgrade signed with `X-Twilio-Signature` over the relay URL, no parameters), sends `setup`, then the
 * caller's lines as `prompt`s, one at a time, each after the agent's reply to the one before ended
 * (`last: true`). It hangs up (closes the socket) after the agent's `end`, or after its last line once
 * the agent has answered it. Used by the telephony simulator for every answered call, and by
 * `npm run cli -- call talk` with a person typing the lines.
 */
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
  | { kind: 'agent'; handoff: Record<string, unknown> }
  | { kind: 'caller' }
  | { kind: 'refused'; status?: number }
  | { kind: 'dropped' };

export class RelaySession {
  readonly lines: SpokenLine[] = [];
  private socket: WebSocket | undefined;
  private reply:
    { text: string; at?: number; done: () => void; onToken?: (token: string) => void } | undefined;
  private ended: RelayEnd | undefined;
  private readonly endWaiters: ((end: RelayEnd) => void)[] = [];

  constructor(private readonly call: RelayCall) {}

  /** Connects and sends `setup`; resolves false when the relay refused the upgrade. */
  open(): Promise<boolean> {
    const signature = signTwilioRequest(this.call.authToken, this.call.url, {});
    return new Promise((resolveOpen) => {
      const socket = new WebSocket(this.call.url, { headers: { [SIGNATURE_HEADER]: signature } });
      this.socket = socket;
      socket.once('unexpected-response', (_req, res) => {
        this.finish({ kind: 'refused', status: res.statusCode });
        resolveOpen(false);
      });
      socket.once('error', () => {
        this.finish({ kind: 'refused' });
        resolveOpen(false);
      });
      socket.once('open', () => {
        socket.on('message', (data) => this.onFrame(String(data)));
        socket.on('close', () => this.finish(this.ended ?? { kind: 'dropped' }));
        socket.send(
          JSON.stringify({
            type: 'setup',
            sessionId: `VX${randomBytes(16).toString('hex')}`,
            accountSid: `AC${'0'.repeat(32)}`,
            callSid: this.call.callSid,
            from: this.call.from,
            to: this.call.to,
            direction: this.call.direction,
            callType: 'PSTN',
            customParameters: this.call.parameters,
          }),
        );
        resolveOpen(true);
      });
    });
  }

  private onFrame(text: string): void {
    let frame: { type?: string; token?: string; last?: boolean; handoffData?: string };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    if (frame.type === 'text' && this.reply) {
      const token = frame.token ?? '';
      if (token !== '') {
        this.reply.at ??= Date.now();
        this.reply.text += token;
        this.reply.onToken?.(token);
      }
      if (frame.last) this.reply.done();
    } else if (frame.type === 'end') {
      let handoff: Record<string, unknown> = {};
      try {
        handoff = JSON.parse(frame.handoffData ?? '{}') as Record<string, unknown>;
      } catch {
        handoff = {};
      }
      this.ended = { kind: 'agent', handoff };
      this.reply?.done();
      this.socket?.close(1000);
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
    if (this.ended || !this.socket) return Promise.resolve('');
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
      this.socket!.send(JSON.stringify({ type: 'prompt', voicePrompt: line, lang: 'en-AU', last: true }));
    });
  }

  /** Sends a key press (`dtmf`) and waits for the agent's reply. */
  press(digit: string, options: { timeoutMs: number }): Promise<string> {
    if (this.ended || !this.socket) return Promise.resolve('');
    this.socket.send(JSON.stringify({ type: 'dtmf', digit }));
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
    this.socket?.close(1000);
  }
}
