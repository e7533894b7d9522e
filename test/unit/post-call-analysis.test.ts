import fc from 'fast-check';
import {
  analyseSentiment,
  extractProfile,
  labelFor,
  renderTemplate,
  summarise,
  type TranscriptTurn,
} from '../../functions/post-call/analysis.js';
import {
  agentNumber,
  buildCallRecord,
  otherParty,
  sampleCall,
  webhookPayload,
  type CallFacts,
} from '../../functions/post-call/payload.js';
import { CallRecordWire, WebhookPayload } from '../../functions/post-call/schemas.js';
import { mergeFacts } from '../../functions/contacts/profiles.js';

const turn = (role: 'agent' | 'user', text: string, offsetSeconds = 0): TranscriptTurn => ({
  role,
  text,
  offsetSeconds,
});

describe('sentiment', () => {
  it('scores each turn and labels the call by what the other party said', () => {
    const result = analyseSentiment([
      turn('agent', 'Hello! Wonderful to hear from you, how can I help?'),
      turn('user', 'I am really unhappy, the inspection was terrible and a waste of time.'),
      turn('agent', 'I am sorry to hear that.'),
    ]);
    expect(result.turns).toHaveLength(3);
    expect(result.turns.map((t) => t.role)).toEqual(['agent', 'user', 'agent']);
    expect(result.turns[0].label).toBe('positive');
    expect(result.turns[1].label).toBe('negative');
    // The agent's cheerful words do not make an unhappy caller's call positive.
    expect(result.label).toBe('negative');
    expect(result.score).toBe(result.turns[1].score);
  });

  it('is neutral for an empty transcript and for plain questions', () => {
    expect(analyseSentiment([])).toEqual({ label: 'neutral', score: 0, turns: [] });
    expect(analyseSentiment([turn('user', 'What is the price of 12 Smith Street?')]).label).toBe('neutral');
  });

  it('falls back to every turn when the other party said nothing', () => {
    const result = analyseSentiment([turn('agent', 'Great news, thanks, we love it!')]);
    expect(result.label).toBe('positive');
  });

  it('keeps every score within (-1, 1) and the labels consistent with the scores', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ role: fc.constantFrom<'agent' | 'user'>('agent', 'user'), text: fc.string() }), {
          maxLength: 8,
        }),
        (turns) => {
          const result = analyseSentiment(turns.map((t) => turn(t.role, t.text)));
          for (const s of [result, ...result.turns]) {
            expect(s.score).toBeGreaterThan(-1);
            expect(s.score).toBeLessThan(1);
            expect(s.label).toBe(labelFor(s.score));
          }
        },
      ),
    );
  });
});

describe('summary', () => {
  const base = {
    direction: 'inbound' as const,
    status: 'completed',
    fromPhone: '+61491570156',
    toPhone: '+61491570157',
    durationSeconds: 62,
    agentName: 'Riley',
    properties: [{ listingId: 'lst_1', address: '12 Example Street, Sydney NSW 2000', price: '$1,250,000' }],
  };

  it('names the call, the first real question, the quoted listings and the sentiment', () => {
    const transcript = [
      turn('agent', 'Hello!'),
      turn('user', 'Hi'),
      turn('user', 'What is the asking price for 12 Example Street?'),
    ];
    const text = summarise({ ...base, transcript, sentiment: analyseSentiment(transcript) });
    expect(text).toBe(
      'Inbound call from +61491570156 with Riley, completed after 1m 02s. ' +
        'The caller said: "What is the asking price for 12 Example Street?" ' +
        'Quoted: 12 Example Street, Sydney NSW 2000 ($1,250,000). Sentiment: neutral.',
    );
  });

  it('describes a failed outbound call by its end reason', () => {
    const text = summarise({
      ...base,
      direction: 'outbound',
      status: 'failed',
      endReason: 'no_answer',
      transcript: [],
      properties: [],
      sentiment: analyseSentiment([]),
    });
    expect(text).toBe('Outbound call to +61491570157 with Riley, failed (no answer).');
  });
});

describe('profile extraction', () => {
  it('finds the name, email, intents and budget in what the other party said only', () => {
    const extract = extractProfile([
      turn('agent', 'My name is Riley, email me at agent@agency.example. Are you looking to sell?'),
      turn('user', "Hi, my name is Jordan Lee. I'm looking to buy, my budget is about $850,000."),
      turn('user', 'You can reach me at Jordan.Lee@Example.com. Maybe 1.2 million at a stretch.'),
    ]);
    expect(extract).toEqual({
      name: 'Jordan Lee',
      email: 'jordan.lee@example.com',
      intents: ['buy'],
      budget: 1_200_000,
    });
  });

  it('finds nothing in small talk', () => {
    expect(extractProfile([turn('user', 'This is great, thanks so much.')])).toEqual({ intents: [] });
  });
});

describe('templates', () => {
  it('fills known placeholders and drops unknown ones', () => {
    expect(
      renderTemplate('Hi {{ name }}, {{agent_name}} here.{{missing}}', { name: 'Sam', agent_name: 'Riley' }),
    ).toBe('Hi Sam, Riley here.');
  });
});

describe('the call record (post-call webhook data)', () => {
  const call: CallFacts = {
    ...sampleCall({
      workspaceId: 'ws_1',
      organisationId: 'org_1',
      agentId: 'ag_1',
      agentName: 'Riley',
      at: new Date('2026-11-22T01:30:00.000Z'),
    }),
    callId: 'call_1',
  };

  it('has the documented fields: metadata, transcript, sentiment, recording reference, properties with address', () => {
    const record = buildCallRecord(call, {
      publicBaseUrl: 'https://api.example.com/',
      contact: { contactId: 'ct_1', name: 'Alex Example', phone: '+61491570156' },
    });
    expect(CallRecordWire.unwrap().strict().parse(record)).toEqual(record);
    expect(record).toMatchObject({
      call_id: 'call_1',
      workspace_id: 'ws_1',
      agent_id: 'ag_1',
      agent_name: 'Riley',
      direction: 'inbound',
      status: 'completed',
      from_phone: '+61491570156',
      to_phone: '+61491570157',
      ended_at: '2026-11-22T01:30:00.000Z',
      duration_seconds: 62,
      recording: {
        key: 'recordings/ws_1/call_00000000000000000000000000.wav',
        url: 'https://api.example.com/api/v1/workspaces/ws_1/calls/call_1/recording',
        content_type: 'audio/wav',
        duration_seconds: 62,
      },
      contact: { contact_id: 'ct_1', name: 'Alex Example', phone: '+61491570156', email: null },
      properties: [
        { listing_id: 'lst_example_12', address: '12 Example Street, Sydney NSW 2000', price: '$1,250,000' },
      ],
    });
    expect(record.transcript[1]).toEqual({
      role: 'user',
      text: expect.stringContaining('12 Example Street'),
      offset_seconds: 4,
    });
    expect(record.sentiment.turns).toHaveLength(4);
    expect(record.sentiment.label).toBe('positive');
    const payload = webhookPayload('call.ended', record, record.ended_at!);
    expect(WebhookPayload.parse(payload)).toEqual({
      type: 'call.ended',
      timestamp: '2026-11-22T01:30:00.000Z',
      data: record,
    });
  });

  it('has no recording when the call was not recorded and no properties when none was quoted', () => {
    const record = buildCallRecord(
      { ...call, recordingKey: undefined, quotedListings: [] },
      { publicBaseUrl: 'http://x' },
    );
    expect(record.recording).toBeNull();
    expect(record.properties).toEqual([]);
    expect(record.contact).toBeNull();
  });

  it('is the same for the same call (retries send identical bodies)', () => {
    expect(JSON.stringify(buildCallRecord(call, { publicBaseUrl: 'http://x' }))).toBe(
      JSON.stringify(buildCallRecord(call, { publicBaseUrl: 'http://x' })),
    );
  });

  it('knows which side is the other party', () => {
    expect(otherParty(call)).toBe('+61491570156');
    expect(agentNumber(call)).toBe('+61491570157');
    expect(otherParty({ ...call, direction: 'outbound' })).toBe('+61491570157');
  });
});

describe('profile merging', () => {
  it('merges lists without duplicates and replaces other values', () => {
    expect(
      mergeFacts(
        { intents: ['buy'], budget: 1, keep: true },
        { intents: ['buy', 'rent'], budget: 2, gone: undefined },
      ),
    ).toEqual({
      intents: ['buy', 'rent'],
      budget: 2,
      keep: true,
    });
  });
});
