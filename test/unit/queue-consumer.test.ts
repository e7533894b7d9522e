import { jest } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { sqsEvent } from '../../lib/local/events.js';
import { logger } from '../../functions/platform/logger.js';
import {
  NothingChanged,
  outcomeWithoutRepeats,
  queueConsumer,
} from '../../functions/platform/queue-consumer.js';
import type { DispatchMessage } from '../../functions/platform/queue-messages.js';

/** The one SQS consumer: per-record failures, one schema per queue, malformed messages fail to the DLQ. */
describe('queueConsumer', () => {
  const context = { functionName: 'Test', getRemainingTimeInMillis: () => 30_000 } as Context;
  const event = (...bodies: string[]) =>
    sqsEvent(
      bodies.map((Body, i) => ({ MessageId: `m${i}`, Body })),
      'arn:aws:sqs:us-east-1:000000000000:calls',
      'us-east-1',
    );
  const dispatch = (callId: string): string =>
    JSON.stringify({
      type: 'call.dispatch',
      call_id: callId,
      workspace_id: 'ws_1',
    } satisfies DispatchMessage);

  it('hands each parsed message to the handler; all succeeded is an empty failure list', async () => {
    const seen: DispatchMessage[] = [];
    const handler = queueConsumer('calls', async (message) => {
      seen.push(message);
      return 'dispatched';
    });
    expect(await handler(event(dispatch('c1'), dispatch('c2')), context)).toEqual({ batchItemFailures: [] });
    expect(seen.map((m) => m.call_id).sort()).toEqual(['c1', 'c2']);
  });

  it('a failing message fails alone; the rest of the batch is handled', async () => {
    const handler = queueConsumer('calls', async (message) => {
      if (message.call_id === 'bad') throw new Error('provider down');
      return 'dispatched';
    });
    expect(await handler(event(dispatch('c1'), dispatch('bad'), dispatch('c3')), context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }],
    });
  });

  it.each([
    ['not JSON', '{"type":'],
    ['another queue’s message', JSON.stringify({ type: 'call.ended', call_id: 'c', workspace_id: 'w' })],
    ['a missing field', JSON.stringify({ type: 'call.dispatch', call_id: 'c' })],
  ])(
    'a malformed message (%s) is reported failed, never handled, and does not hold up the batch',
    async (_, body) => {
      const handled: string[] = [];
      const handler = queueConsumer('calls', async (message) => handled.push(message.call_id));
      expect(await handler(event(body, dispatch('c2')), context)).toEqual({
        batchItemFailures: [{ itemIdentifier: 'm0' }],
      });
      expect(handled).toEqual(['c2']);
    },
  );

  it('a batch that failed whole is reported per record, not thrown', async () => {
    const handler = queueConsumer('calls', async () => {
      throw new Error('down');
    });
    const { batchItemFailures } = await handler(event(dispatch('c1'), '{}'), context);
    expect(batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m0', 'm1']);
  });

  describe('its log: changes, not heartbeats; each id once', () => {
    it('a message that changed nothing is logged at DEBUG, a change at INFO', async () => {
      const info = jest.spyOn(logger, 'info').mockImplementation(() => undefined);
      const debug = jest.spyOn(logger, 'debug').mockImplementation(() => undefined);
      try {
        const handler = queueConsumer('calls', async (message) =>
          message.call_id === 'idle' ? new NothingChanged('0 claimed') : '1 claimed',
        );
        await handler(event(dispatch('idle'), dispatch('busy')), context);
        expect(info.mock.calls.map(([message]) => message)).toEqual(['queue message handled']);
        expect(debug.mock.calls).toEqual([
          ['queue message handled: nothing changed', expect.objectContaining({ outcome: '0 claimed' })],
        ]);
      } finally {
        info.mockRestore();
        debug.mockRestore();
      }
    });

    it("an outcome does not repeat the message's ids (`event.id` and `event_id`)", () => {
      const message = { type: 'workspace.event', event: { id: 'evt_1', type: 'contact.created' } };
      expect(
        outcomeWithoutRepeats({ event_id: 'evt_1', deliveries: ['wd_1'], subscribers: [] }, message),
      ).toEqual({ deliveries: ['wd_1'], subscribers: [] });
      expect(outcomeWithoutRepeats({ event_id: 'evt_2' }, message)).toEqual({ event_id: 'evt_2' });
      expect(outcomeWithoutRepeats('applied', message)).toBe('applied');
    });
  });
});
