import fc from 'fast-check';
import { renderTemplate, referencedParameters } from '../../functions/agents/template.js';
import { StartCallBody } from '../../functions/calling/schemas.js';
import {
  callDurationSeconds,
  canMove,
  deadlineFor,
  INTERNAL_STATUSES,
  isTerminal,
  LOST_MARGIN_SECONDS,
  POST_CALL_GRACE_SECONDS,
  RANK,
  readyForPostCall,
  wireStatus,
  type InternalStatus,
} from '../../functions/calling/status.js';
import { ValidationError } from '../../functions/platform/errors.js';
import { parseOrThrow } from '../../functions/platform/validation.js';

/** Pure rules of the call lifecycle and of start-call's body. */

describe('status transitions', () => {
  it('only move forward, and a terminal status is final', () => {
    expect(canMove('created', 'initiated')).toBe(true);
    expect(canMove('initiated', 'completed')).toBe(true); // skipping is allowed
    expect(canMove('connected', 'initiated')).toBe(false); // a late callback
    expect(canMove('inprogress', 'inprogress')).toBe(false); // a duplicate
    expect(canMove('completed', 'failed')).toBe(false);
    expect(canMove('failed', 'completed')).toBe(false);
    expect(wireStatus('dialling')).toBe('created');
  });

  it('any sequence of callbacks, in any order, ends at the highest status first reached and never moves back', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom<InternalStatus>('initiated', 'connected', 'inprogress', 'completed', 'failed'),
          { maxLength: 12 },
        ),
        (events) => {
          let status: InternalStatus = 'created';
          const ranks = [RANK[status]];
          for (const next of events) {
            if (canMove(status, next)) status = next;
            ranks.push(RANK[status]);
          }
          for (let i = 1; i < ranks.length; i += 1) expect(ranks[i]).toBeGreaterThanOrEqual(ranks[i - 1]);
          const firstTerminal = events.find((e) => isTerminal(e));
          if (firstTerminal) expect(status).toBe(firstTerminal);
        },
      ),
    );
    expect(INTERNAL_STATUSES.filter(isTerminal)).toEqual(['completed', 'failed']);
  });
});

describe('duration and deadlines', () => {
  it("counts whole seconds from answer to end; the provider's figure wins", () => {
    expect(
      callDurationSeconds({ answeredAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:01:00.900Z' }),
    ).toBe(60);
    expect(
      callDurationSeconds({
        answeredAt: '2026-01-01T00:00:00.000Z',
        endedAt: '2026-01-01T00:00:10.000Z',
        providerSeconds: 1800,
      }),
    ).toBe(1800);
    expect(callDurationSeconds({ endedAt: '2026-01-01T00:00:10.000Z' })).toBe(0);
    expect(
      callDurationSeconds({ answeredAt: '2026-01-01T00:00:10.000Z', endedAt: '2026-01-01T00:00:00.000Z' }),
    ).toBe(0);
  });

  it('gives a call up after its maximum duration plus the margin', () => {
    expect(deadlineFor('2026-01-01T00:00:00.000Z', 3600)).toBe(
      new Date(Date.parse('2026-01-01T00:00:00.000Z') + (3600 + LOST_MARGIN_SECONDS) * 1000).toISOString(),
    );
  });
});

describe('when the post-call pipeline is told', () => {
  const ended = {
    status: 'completed' as const,
    endReason: 'completed' as const,
    record: true,
    connectedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:01:00.000Z',
    hasTranscript: true,
    transcriptExpected: true,
  };
  const soon = new Date('2026-01-01T00:01:05.000Z');

  it('waits for the recording and transcript of an answered call, within a grace period', () => {
    expect(readyForPostCall({ ...ended, recordingKey: 'recordings/ws/call.wav' }, soon)).toBe(true);
    expect(readyForPostCall(ended, soon)).toBe(false);
    expect(readyForPostCall({ ...ended, recordingKey: 'k', hasTranscript: false }, soon)).toBe(false);
    expect(
      readyForPostCall(ended, new Date(Date.parse(ended.endedAt) + (POST_CALL_GRACE_SECONDS + 1) * 1000)),
    ).toBe(true);
  });

  it('does not wait for what will not come', () => {
    expect(readyForPostCall({ ...ended, record: false }, soon)).toBe(true);
    expect(
      readyForPostCall({ ...ended, connectedAt: undefined, status: 'failed', endReason: 'busy' }, soon),
    ).toBe(true);
    expect(readyForPostCall({ ...ended, status: 'failed', endReason: 'lost' }, soon)).toBe(true);
    expect(
      readyForPostCall(
        { ...ended, hasTranscript: false, transcriptExpected: false, recordingKey: 'k' },
        soon,
      ),
    ).toBe(true);
    expect(readyForPostCall({ ...ended, status: 'inprogress' }, soon)).toBe(false);
  });
});

describe('prompt templates', () => {
  it('fills {{name}} references from the parameters; missing ones become empty', () => {
    expect(renderTemplate('Hi {{name}}, about {{ listing_id }}.', { name: 'Sam', listing_id: 'L1' })).toBe(
      'Hi Sam, about L1.',
    );
    expect(renderTemplate('Hi {{name}}!', {})).toBe('Hi!');
    expect(renderTemplate('{{constructor}} {{toString}}', {})).toBe(' ');
    expect(referencedParameters('{{a}} {{b}} {{a}}')).toEqual(['a', 'b']);
  });
});

describe('start-call body (docs/api.md)', () => {
  const detail = (body: unknown) => {
    try {
      parseOrThrow(StartCallBody, body, 'body');
    } catch (error) {
      if (error instanceof ValidationError) return error.detail;
      throw error;
    }
    return [];
  };

  it('needs only to_phone, in E.164', () => {
    expect(detail({ to_phone: '+61491570156' })).toEqual([]);
    expect(detail({})).toEqual([
      { type: 'missing', loc: ['body', 'to_phone'], msg: 'Field required', input: {} },
    ]);
    for (const bad of [
      '0491570156',
      '+61 491 570 156',
      '+0491570156',
      '+614915701560000000',
      '61491570156',
      '',
    ]) {
      expect(detail({ to_phone: bad })).toEqual([
        {
          type: 'value_error',
          loc: ['body', 'to_phone'],
          msg: 'Value error, value is not a valid phone number in E.164 format',
          input: bad,
        },
      ]);
    }
  });

  it('limits parameters: names and values are strings of bounded length, at most 50', () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, 'v']));
    expect(detail({ to_phone: '+61491570156', parameters: many })[0]).toMatchObject({
      type: 'value_error',
      loc: ['body', 'parameters'],
    });
    expect(detail({ to_phone: '+61491570156', parameters: { name: 'x'.repeat(1001) } })[0]).toMatchObject({
      loc: ['body', 'parameters', 'name'],
    });
  });
});
