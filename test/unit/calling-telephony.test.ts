import twilio from 'twilio';
import {
  duplicatedOutOfOrder,
  inboundTimeline,
  outboundTimeline,
  scenarioFor,
  SCENARIO_NUMBERS,
} from '../../lib/local/simulators/telephony/scenarios.js';
import { describeWav, wavRecording } from '../../lib/local/simulators/telephony/wav.js';
import {
  callTwiml,
  relayEndedTwiml,
  parseTwiml,
  parseVoiceCallback,
  rejectTwiml,
  signTwilioRequest,
} from '../../functions/providers/telephony/twilio-format.js';

/** The telephony port's Twilio dialect and the simulator's pure parts. */

describe('X-Twilio-Signature', () => {
  const token = 'a-test-auth-token-123';
  const url =
    'https://abc.lambda-url.ap-southeast-2.on.aws/webhooks/telephony/voice?call_id=call_1&workspace_id=ws_1';
  const params = {
    CallSid: 'CA123',
    CallStatus: 'completed',
    CallDuration: '60',
    Transcript: '[{"role":"agent","text":"Hi & bye"}]',
  };

  it('is what the official Twilio library expects', () => {
    const signature = signTwilioRequest(token, url, params);
    expect(twilio.validateRequest(token, signature, url, params)).toBe(true);
    expect(twilio.validateRequest('another-token-4567890', signature, url, params)).toBe(false);
    expect(twilio.validateRequest(token, signature, url.replace('call_1', 'call_2'), params)).toBe(false);
    expect(twilio.validateRequest(token, signature, url, { ...params, CallDuration: '61' })).toBe(false);
  });
});

describe('callbacks → events', () => {
  it('maps Twilio call statuses to ours, with end reasons', () => {
    const status = (CallStatus: string) => parseVoiceCallback({ CallSid: 'CA1', CallStatus });
    expect(status('initiated')).toMatchObject({ kind: 'status', status: 'initiated' });
    expect(status('ringing')).toMatchObject({ kind: 'status', status: 'initiated' });
    expect(status('in-progress')).toMatchObject({ kind: 'status', status: 'connected' });
    expect(status('completed')).toMatchObject({ status: 'completed', endReason: 'completed' });
    expect(status('busy')).toMatchObject({ status: 'failed', endReason: 'busy' });
    expect(status('no-answer')).toMatchObject({ status: 'failed', endReason: 'no_answer' });
    expect(status('failed')).toMatchObject({ status: 'failed', endReason: 'failed' });
    expect(status('canceled')).toMatchObject({ status: 'failed', endReason: 'canceled' });
    expect(status('exploded')).toMatchObject({ kind: 'ignored' });
    expect(
      parseVoiceCallback({ CallSid: 'CA1', CallStatus: 'in-progress', ConversationStatus: 'started' }),
    ).toMatchObject({ status: 'inprogress' });
    expect(parseVoiceCallback({ CallStatus: 'completed' })).toMatchObject({ kind: 'ignored' });
  });

  it('reads durations, times, transcripts and recordings; ignores what does not parse', () => {
    const event = parseVoiceCallback({
      CallSid: 'CA1',
      CallStatus: 'completed',
      CallDuration: '1800',
      Timestamp: 'Sun, 22 Nov 2026 01:30:00 +0000',
      Transcript: JSON.stringify([{ role: 'agent', text: 'Hi', offset_seconds: 0 }]),
      QuotedListings: 'not json',
    });
    expect(event).toMatchObject({
      durationSeconds: 1800,
      at: '2026-11-22T01:30:00.000Z',
      transcript: [{ role: 'agent', text: 'Hi', offset_seconds: 0 }],
    });
    expect(event.kind === 'status' && event.quotedListings).toBeUndefined();
    expect(parseVoiceCallback({ CallSid: 'CA1', CallStatus: 'completed', CallDuration: '-5' })).toMatchObject(
      { durationSeconds: undefined },
    );
    expect(
      parseVoiceCallback({
        CallSid: 'CA1',
        RecordingStatus: 'completed',
        RecordingUrl: 'https://x/RE1',
        RecordingDuration: '60',
      }),
    ).toEqual({
      kind: 'recording',
      providerCallId: 'CA1',
      recordingUrl: 'https://x/RE1',
      recordingId: undefined,
      durationSeconds: 60,
    });
    expect(
      parseVoiceCallback({ CallSid: 'CA1', RecordingStatus: 'in-progress', RecordingUrl: 'https://x' }),
    ).toMatchObject({ kind: 'ignored' });
  });
});

describe('TwiML', () => {
  const relay = {
    url: 'wss://relay.example.com/live',
    actionUrl: 'https://x/relay-ended?call_id=call_1&workspace_id=ws_1',
    language: 'en-AU',
    ttsProvider: 'ElevenLabs',
    voice: 'UgBBYS2sOqTuMpoF3BR0-flash_v2_5-1.0_0.5_0.8',
    interruptible: true,
    hints: ['strata', 'auction & clearance'],
  };
  it('connects the call to the relay with the greeting, the agent settings and the call named, escaped, and reads back', () => {
    const twiml = callTwiml({
      callId: 'call_1',
      workspaceId: 'ws_1',
      greeting: 'Hi <Sam> & "friends"',
      record: true,
      recordingCallbackUrl: 'https://x/voice?call_id=call_1&workspace_id=ws_1',
      relay,
    });
    expect(twiml).toContain('<Connect action="https://x/relay-ended?call_id=call_1&amp;workspace_id=ws_1">');
    expect(twiml).toContain('dtmfDetection="true"');
    expect(twiml).toContain('interruptible="any"');
    expect(twiml).not.toContain('<Stream');
    const parsed = parseTwiml(twiml);
    expect(parsed).toEqual({
      hangup: false,
      say: [],
      recordingCallbackUrl: 'https://x/voice?call_id=call_1&workspace_id=ws_1',
      connectAction: relay.actionUrl,
      relay: {
        url: relay.url,
        welcomeGreeting: 'Hi <Sam> & "friends"',
        welcomeGreetingInterruptible: 'any',
        language: 'en-AU',
        ttsProvider: 'ElevenLabs',
        voice: relay.voice,
        interruptible: 'any',
        dtmfDetection: 'true',
        hints: 'strata,auction & clearance',
      },
      parameters: { call_id: 'call_1', workspace_id: 'ws_1' },
    });
    expect(parseTwiml(rejectTwiml()).hangup).toBe(true);
  });
  it('an agent that may not be interrupted, without a greeting or terms', () => {
    const twiml = callTwiml({
      callId: 'call_1',
      workspaceId: 'ws_1',
      greeting: ' ',
      record: false,
      recordingCallbackUrl: 'https://x',
      relay: { ...relay, interruptible: false, hints: [] },
    });
    const parsed = parseTwiml(twiml);
    expect(parsed.relay?.interruptible).toBe('none');
    expect(parsed.relay?.welcomeGreeting).toBeUndefined();
    expect(parsed.relay?.hints).toBeUndefined();
    expect(parsed.recordingCallbackUrl).toBeUndefined();
  });
  it('the relay-ended answer: hang up, or dial the transfer number', () => {
    expect(parseTwiml(relayEndedTwiml()).hangup).toBe(true);
    expect(parseTwiml(relayEndedTwiml('+61291234567')).dial).toBe('+61291234567');
  });
});

describe('simulator scenarios', () => {
  it('are chosen by the called number as docs/api.md says', () => {
    expect(scenarioFor('+61491570156')).toBe('answered');
    expect(scenarioFor(SCENARIO_NUMBERS.busy)).toBe('busy');
    expect(scenarioFor('+61491570111')).toBe('no_answer');
    expect(scenarioFor('+61491570112')).toBe('failed');
    expect(scenarioFor('+61491570113')).toBe('long');
    expect(scenarioFor('+61491570116')).toBe('external');
    expect(scenarioFor('+61491570114')).toBe('duplicated');
  });

  it('play about 60 s of conversation, 1,800 s for the long number, cut by the time limit', () => {
    expect(outboundTimeline('answered', { timeLimit: 3600, record: true })).toMatchObject({
      talkSeconds: 60,
      answerAt: 5,
    });
    expect(outboundTimeline('long', { timeLimit: 3600, record: false }).talkSeconds).toBe(1800);
    expect(outboundTimeline('long', { timeLimit: 600, record: false }).talkSeconds).toBe(600);
    const answered = outboundTimeline('answered', { timeLimit: 3600, record: true });
    expect(answered.steps.map((s) => s.status ?? s.kind)).toEqual([
      'initiated',
      'ringing',
      'in-progress',
      'started',
      'completed',
      'recording',
    ]);
    // Like Twilio, only the status callback's events are sent (the voice runtime's `started` always).
    const subscribed = { timeLimit: 3600, record: true, events: ['answered', 'completed'] } as const;
    expect(outboundTimeline('answered', subscribed).steps.map((s) => s.status ?? s.kind)).toEqual([
      'in-progress',
      'started',
      'completed',
      'recording',
    ]);
    expect(outboundTimeline('busy', subscribed).steps.map((s) => s.status)).toEqual(['busy']);
    expect(
      outboundTimeline('duplicated', subscribed)
        .steps.filter((s) => s.duplicate)
        .map((s) => s.status ?? s.kind),
    ).toEqual(['in-progress', 'started', 'completed', 'recording']);
    expect(
      outboundTimeline('answered', { timeLimit: 3600, record: false }).steps.some(
        (s) => s.kind === 'recording',
      ),
    ).toBe(false);
    expect(outboundTimeline('busy', { timeLimit: 3600, record: true }).steps.at(-1)).toMatchObject({
      status: 'busy',
    });
    expect(outboundTimeline('no_answer', { timeLimit: 3600, record: true }).steps.at(-1)).toMatchObject({
      status: 'no-answer',
      at: 31,
    });
    expect(outboundTimeline('failed', { timeLimit: 3600, record: true }).steps.at(-1)).toMatchObject({
      status: 'failed',
    });
    expect(inboundTimeline({ timeLimit: 3600, record: true }).steps[0]).toMatchObject({
      status: 'in-progress',
      at: 0,
    });
  });

  it('the duplicated scenario sends every callback twice, each duplicate late', () => {
    const steps = outboundTimeline('answered', { timeLimit: 3600, record: false }).steps;
    const dup = duplicatedOutOfOrder(steps);
    for (const step of steps)
      expect(dup.filter((d) => d.status === step.status && d.kind === step.kind)).toHaveLength(2);
    // `started` is sent again after `completed`: out of order.
    const order = dup.map((d) => `${d.status}${d.duplicate ? '*' : ''}`);
    expect(order.indexOf('started*')).toBeGreaterThan(order.indexOf('completed'));
  });
});

describe('the WAV recording', () => {
  it('is a real PCM file as long as the call, small, mostly silence with a tone per turn', () => {
    const wav = wavRecording([{ role: 'agent' }, { role: 'user' }], 3);
    expect(describeWav(wav)).toEqual({ sampleRate: 4000, channels: 1, bitsPerSample: 8, seconds: 3 });
    // As long as the call, however long: 30 minutes at 4 kB a second.
    const long = wavRecording([{ role: 'agent', offset_seconds: 0 }], 1800);
    expect(describeWav(long)?.seconds).toBe(1800);
    expect(long.length).toBe(44 + 1800 * 4000);
    expect(describeWav(Buffer.from('not a wav file at all, not even close........'))).toBeUndefined();
    // Not silence: each turn starts with a tone (unsigned 8-bit, silence is 128)…
    const samples = [...wav.subarray(44)];
    expect(Math.max(...samples)).toBeGreaterThan(160);
    // …at its offset, and the rest is silence.
    const turns = wavRecording(
      [
        { role: 'agent', offset_seconds: 0 },
        { role: 'user', offset_seconds: 30 },
      ],
      60,
    ).subarray(44);
    const loudAt = (second: number) => Math.max(...turns.subarray(second * 4000, (second + 1) * 4000)) > 160;
    expect([0, 10, 29, 30, 59].map(loudAt)).toEqual([true, false, false, true, false]);
  });
});
