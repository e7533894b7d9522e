import type { CallDriver, CallEvents } from './call-driver';

/**
 * The `browser` transport of a web call: the page plays ConversationRelay's part over the relay's web
 * route (opened with the call's one-time ticket), so a developer talks to an agent with no telephony
 * account at all.
 *   - Speech to text: `SpeechRecognition` (continuous, interim results shown, restarted when the
 *     browser stops it); each final result is a `prompt` frame with `last: true`.
 *   - Text to speech: `speechSynthesis` in the agent's language; each `text` frame (a clause) is queued
 *     as it arrives, so the agent is heard while its reply still streams.
 *   - Barge-in, as ConversationRelay does: the caller speaking while the agent speaks cancels its
 *     speech and sends `interrupt` with `utteranceUntilInterrupt`, the words already spoken (from each
 *     utterance's `boundary` events); what is left of that reply is not spoken.
 */

interface RecognitionAlternative {
  transcript: string;
}
interface RecognitionResult {
  readonly isFinal: boolean;
  readonly length: number;
  [index: number]: RecognitionAlternative;
}
interface RecognitionEvent {
  readonly resultIndex: number;
  readonly results: { readonly length: number; [index: number]: RecognitionResult };
}
interface Recognition {
  lang: string;
  continuous: boolean;
  interimResults: boolean;
  onresult: ((event: RecognitionEvent) => void) | null;
  onend: (() => void) | null;
  onerror: ((event: { error: string }) => void) | null;
  start(): void;
  stop(): void;
  abort(): void;
}
type RecognitionConstructor = new () => Recognition;

/** The browser's speech recognition, where it has one (Chrome, Edge, Safari: yes; Firefox: no). */
export function speechRecognition(): RecognitionConstructor | undefined {
  const scope = globalThis as unknown as {
    SpeechRecognition?: RecognitionConstructor;
    webkitSpeechRecognition?: RecognitionConstructor;
  };
  return scope.SpeechRecognition ?? scope.webkitSpeechRecognition;
}

/** The relay's web route with the one-time ticket (never the user's token). */
export function webRouteUrl(relayUrl: string, ticket: string): string {
  const url = new URL(relayUrl);
  url.searchParams.set('channel', 'web');
  url.searchParams.set('ticket', ticket);
  return url.href;
}

type Frame =
  | { type: 'session'; call_id: string }
  | { type: 'text'; token: string; last: boolean }
  | { type: 'end' }
  | { type: string };

/** One queued piece of the agent's speech, and how much of it was heard. */
interface Spoken {
  text: string;
  heard: number;
  done: boolean;
}

export class BrowserSpeechCall implements CallDriver {
  private socket?: WebSocket;
  private recognition?: Recognition;
  private media?: MediaStream;
  private audio?: AudioContext;
  private meter?: number;
  private muted = false;
  private live = false;
  /** The reply being spoken, piece by piece (cleared when it is all spoken or cut). */
  private speaking: Spoken[] = [];
  /** A reply is streaming (a text frame without `last` came). */
  private replyOpen = false;
  /** The rest of an interrupted reply is not spoken. */
  private discarding = false;
  private agentLine = '';

  constructor(
    private readonly options: { relayUrl: string; ticket: string; language: string; interruptible: boolean },
    private readonly events: CallEvents,
  ) {}

  async start(): Promise<void> {
    const Recognition = speechRecognition();
    if (!Recognition) throw new Error('This browser has no speech recognition.');
    // Asked first: the browser's microphone permission (the level meter listens to the same microphone).
    this.media = await navigator.mediaDevices.getUserMedia({ audio: true });
    this.watchLevel(this.media);
    this.live = true;
    const recognition = new Recognition();
    recognition.lang = this.options.language;
    recognition.continuous = true;
    recognition.interimResults = true;
    recognition.onresult = (event) => this.heard(event);
    // Chrome ends a continuous recognition after a silence: listen again while the call lasts.
    recognition.onend = () => {
      if (this.live && !this.muted) this.listen();
    };
    recognition.onerror = (event) => {
      if (event.error === 'not-allowed' || event.error === 'service-not-allowed') {
        this.events.status('failed', 'The browser refused speech recognition.');
        this.end();
      }
    };
    this.recognition = recognition;

    const socket = new WebSocket(webRouteUrl(this.options.relayUrl, this.options.ticket));
    this.socket = socket;
    socket.onopen = () => socket.send(JSON.stringify({ type: 'start' }));
    socket.onmessage = (event) => this.received(String(event.data));
    socket.onclose = () => {
      this.stopListening();
      if (!this.connected) {
        this.stopSpeaking();
        this.events.status('failed', 'Could not connect the call.');
        return;
      }
      // The agent's last words (its goodbye) are still heard before the call is over.
      void this.spoken().then(() => this.events.status('ended'));
    };
  }

  private connected = false;

  setMuted(muted: boolean): void {
    this.muted = muted;
    for (const track of this.media?.getAudioTracks() ?? []) track.enabled = !muted;
    if (muted) {
      this.recognition?.abort();
      this.events.interim('');
    } else if (this.live) this.listen();
  }

  end(): void {
    const socket = this.socket;
    this.stopListening();
    this.stopSpeaking();
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close();
  }

  private listen(): void {
    try {
      this.recognition?.start();
    } catch {
      // Already listening.
    }
  }

  private stopListening(): void {
    this.live = false;
    this.recognition?.abort();
    if (this.meter !== undefined) cancelAnimationFrame(this.meter);
    for (const track of this.media?.getTracks() ?? []) track.stop();
    void this.audio?.close().catch(() => undefined);
    this.events.level(0);
    this.events.interim('');
  }

  private stopSpeaking(): void {
    speechSynthesis.cancel();
    this.speaking = [];
  }

  /** Resolves once the agent's queued speech has been spoken (at most 20 s). */
  private async spoken(): Promise<void> {
    const until = Date.now() + 20_000;
    while ((speechSynthesis.speaking || speechSynthesis.pending) && Date.now() < until)
      await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }

  private received(data: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(data) as Frame;
    } catch {
      return;
    }
    if (frame.type === 'session' && 'call_id' in frame) {
      this.connected = true;
      this.events.callId?.(frame.call_id);
      this.events.status('connected');
      if (!this.muted) this.listen();
    } else if (frame.type === 'text' && 'token' in frame) {
      this.replyOpen = !frame.last;
      if (this.discarding) {
        if (frame.last) this.discarding = false;
        return;
      }
      this.agentLine += frame.token;
      if (this.agentLine.trim() || frame.last) this.events.line('agent', this.agentLine, frame.last);
      if (frame.last) this.agentLine = '';
      if (frame.token.trim()) this.say(frame.token);
    } else if (frame.type === 'end') {
      // The agent ended the call: the caller is not heard any more; what it said is still spoken.
      this.stopListening();
    }
  }

  /** Queues a clause of the agent's reply; its boundary events say how much of it was heard. */
  private say(text: string): void {
    const piece: Spoken = { text, heard: 0, done: false };
    this.speaking.push(piece);
    const utterance = new SpeechSynthesisUtterance(text);
    utterance.lang = this.options.language;
    const voice = pickVoice(this.options.language);
    if (voice) utterance.voice = voice;
    utterance.onboundary = (event) => {
      const length = (event as SpeechSynthesisEvent & { charLength?: number }).charLength;
      piece.heard = Math.max(piece.heard, event.charIndex + (length ?? wordLength(text, event.charIndex)));
    };
    utterance.onend = () => {
      piece.done = true;
      piece.heard = text.length;
      if (this.speaking.every((p) => p.done) && !this.replyOpen) this.speaking = [];
    };
    speechSynthesis.speak(utterance);
  }

  private heard(event: RecognitionEvent): void {
    if (!this.live || this.muted) return;
    let interim = '';
    for (let i = event.resultIndex; i < event.results.length; i += 1) {
      const result = event.results[i];
      const text = result[0]?.transcript ?? '';
      if (!text.trim()) continue;
      this.bargeIn();
      if (result.isFinal) {
        this.events.line('caller', text.trim(), true);
        this.socket?.send(
          JSON.stringify({
            type: 'prompt',
            voicePrompt: text.trim(),
            lang: this.options.language,
            last: true,
          }),
        );
      } else interim += text;
    }
    this.events.interim(interim.trim());
  }

  /** The caller speaks over the agent: its speech stops, and the service hears what was heard of it. */
  private bargeIn(): void {
    const speaking = this.speaking.some((p) => !p.done) || speechSynthesis.speaking;
    if (!this.options.interruptible || !speaking) return;
    const heard = this.speaking
      .map((p) => p.text.slice(0, p.heard))
      .join('')
      .trim();
    speechSynthesis.cancel();
    this.speaking = [];
    if (this.replyOpen) this.discarding = true;
    if (this.agentLine) {
      this.events.line('agent', heard, true);
      this.agentLine = '';
    }
    this.socket?.send(JSON.stringify({ type: 'interrupt', utteranceUntilInterrupt: heard }));
  }

  private watchLevel(stream: MediaStream): void {
    try {
      this.audio = new AudioContext();
      const analyser = this.audio.createAnalyser();
      analyser.fftSize = 512;
      this.audio.createMediaStreamSource(stream).connect(analyser);
      const samples = new Float32Array(analyser.fftSize);
      const tick = () => {
        analyser.getFloatTimeDomainData(samples);
        let sum = 0;
        for (const sample of samples) sum += sample * sample;
        this.events.level(Math.min(1, Math.sqrt(sum / samples.length) * 4));
        this.meter = requestAnimationFrame(tick);
      };
      tick();
    } catch {
      // No Web Audio: the call works without the meter.
    }
  }
}

/** A voice for the agent's language: exactly it, else the same language anywhere; else the browser's default. */
function pickVoice(language: string): SpeechSynthesisVoice | undefined {
  const voices = speechSynthesis.getVoices();
  const base = language.split('-')[0].toLowerCase();
  return (
    voices.find((v) => v.lang.toLowerCase() === language.toLowerCase()) ??
    voices.find((v) => v.lang.toLowerCase().split(/[-_]/)[0] === base)
  );
}

/** The word at `index` (a boundary event without `charLength`, as older browsers send). */
function wordLength(text: string, index: number): number {
  const match = /^\S+/.exec(text.slice(index));
  return match ? match[0].length : 0;
}
