/**
 * What the test call's panel (test-call.tsx) hears from a transport: the browser's own speech over the
 * relay's web route (browser-speech-call.ts), or Twilio's Voice SDK (twilio-call.ts, its own chunk).
 */
export type CallStatus = 'connecting' | 'connected' | 'ended' | 'failed';

export interface CallEvents {
  status(status: CallStatus, detail?: string): void;
  /** The call's id, once the service named it. */
  callId?(id: string): void;
  /** A whole line of the caller's (final) or the agent's (`done` once its reply ended). */
  line(who: 'caller' | 'agent', text: string, done: boolean): void;
  /** The caller's words as recognised so far (empty: none pending). */
  interim(text: string): void;
  /** The microphone's input level, 0 to 1. */
  level(value: number): void;
}

export interface CallDriver {
  start(): Promise<void>;
  setMuted(muted: boolean): void;
  end(): void;
}
