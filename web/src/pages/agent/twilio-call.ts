import { Device, type Call } from '@twilio/voice-sdk';
import type { CallDriver, CallEvents } from './call-driver';

/**
 * The `twilio` transport of a web call, loaded only for it (its own chunk: the dashboard's first load
 * never carries the SDK). The browser joins the same ConversationRelay as a phone call: the Access
 * Token names the call, Twilio asks our web-call webhook, and the agent speaks in its own voice. The
 * SDK carries audio only: the conversation's words are in the call's transcript once it ends.
 */
export class TwilioCall implements CallDriver {
  private device?: Device;
  private call?: Call;
  private connected = false;

  constructor(
    private readonly options: { token: string; callId: string },
    private readonly events: CallEvents,
  ) {}

  async start(): Promise<void> {
    // The microphone's permission first, so the browser asks before Twilio connects.
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    for (const track of stream.getTracks()) track.stop();
    const device = new Device(this.options.token, { closeProtection: true });
    this.device = device;
    device.on('error', () => {
      if (!this.connected) this.events.status('failed', 'Twilio could not connect the call.');
    });
    const call = await device.connect({ params: { call_id: this.options.callId } });
    this.call = call;
    this.events.callId?.(this.options.callId);
    call.on('accept', () => {
      this.connected = true;
      this.events.status('connected');
    });
    call.on('volume', (input: number) => this.events.level(Math.min(1, input)));
    call.on('disconnect', () => this.finish(this.connected ? 'ended' : 'failed'));
    call.on('cancel', () => this.finish('failed'));
    call.on('reject', () => this.finish('failed'));
    call.on('error', () => {
      if (!this.connected) this.finish('failed');
    });
  }

  setMuted(muted: boolean): void {
    this.call?.mute(muted);
  }

  end(): void {
    this.call?.disconnect();
    this.device?.disconnectAll();
  }

  private finish(status: 'ended' | 'failed'): void {
    this.events.level(0);
    this.events.status(status, status === 'failed' ? 'The call was not connected.' : undefined);
    this.device?.destroy();
  }
}
