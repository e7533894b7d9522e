import { routeWorkspaceEvent, eventDeliveryId } from '../../functions/webhook-deliveries/events.js';
import { endpointUrlProblem } from '../../functions/webhook-deliveries/endpoints.js';
import { isId } from '../../functions/platform/ids.js';
import { messageSchema } from '../../functions/platform/queue-messages.js';

const WorkspaceEventMessage = messageSchema('workspaceEvents');
import {
  fromEventMessage,
  toEventMessage,
  type EventSubscriber,
} from '../../functions/platform/workspace-events.js';

/** Workspace events' pure parts: the message shape, delivery ids, endpoint URLs. */

const event = {
  id: 'evt_call_ended_call_01J00000000000000000000000',
  type: 'call.ended' as const,
  workspaceId: 'ws_1',
  organisationId: 'org_1',
  occurredAt: '2026-11-23T00:00:00.000Z',
  data: { call_id: 'call_1' },
};

describe('workspace events', () => {
  it('travel as the queue message schema and come back as they were published', () => {
    const message = toEventMessage(event);
    expect(WorkspaceEventMessage.parse(JSON.parse(JSON.stringify(message)))).toEqual(message);
    expect(fromEventMessage(message)).toEqual(event);
    expect(
      WorkspaceEventMessage.safeParse({ ...message, event: { ...message.event, type: 'x' } }).success,
    ).toBe(false);
  });

  it('one delivery id per (event, endpoint): the same every time, a valid delivery id, different per endpoint', () => {
    const id = eventDeliveryId(event, 'whe_A');
    expect(isId('delivery', id)).toBe(true);
    expect(eventDeliveryId(event, 'whe_A')).toBe(id);
    expect(eventDeliveryId(event, 'whe_B')).not.toBe(id);
    expect(eventDeliveryId({ ...event, id: 'evt_other' }, 'whe_A')).not.toBe(id);
    // The time part is the event's: later events sort after earlier ones.
    expect(eventDeliveryId({ ...event, occurredAt: '2026-11-24T00:00:00.000Z' }, 'whe_A') > id).toBe(true);
  });

  it('endpoint URLs: http(s), no credentials, no literal internal address unless allowed', () => {
    const saved = process.env.WEBHOOK_ALLOWED_HOSTS;
    process.env.WEBHOOK_ALLOWED_HOSTS = '127.0.0.1:8080';
    try {
      expect(endpointUrlProblem('https://hooks.example.com/x')).toBeUndefined();
      expect(endpointUrlProblem('http://127.0.0.1:8080/x')).toBeUndefined();
      expect(endpointUrlProblem('http://127.0.0.1:8081/x')).toMatch(/loopback/);
      expect(endpointUrlProblem('http://localhost/x')).toMatch(/loopback/);
      expect(endpointUrlProblem('http://[::1]/x')).toMatch(/loopback/);
      expect(endpointUrlProblem('http://172.20.0.1/x')).toMatch(/private/);
      expect(endpointUrlProblem('ftp://example.com/x')).toBe('url must be an http(s) URL');
      expect(endpointUrlProblem('nope')).toBe('url must be a URL');
      expect(endpointUrlProblem('https://a:b@example.com/')).toMatch(/credentials/);
      expect(endpointUrlProblem(`https://example.com/${'x'.repeat(2048)}`)).toMatch(/2048/);
    } finally {
      if (saved === undefined) delete process.env.WEBHOOK_ALLOWED_HOSTS;
      else process.env.WEBHOOK_ALLOWED_HOSTS = saved;
    }
  });

  it('every interested subscriber runs even when one fails, and the failure fails the message', async () => {
    const seen: string[] = [];
    const subscriber = (name: string, fail = false): EventSubscriber => ({
      name,
      types: ['contact.created'],
      handle: async (e) => {
        seen.push(`${name}:${e.id}`);
        if (fail) throw new Error('down');
      },
    });
    const message = toEventMessage({ ...event, type: 'contact.created' });
    // No endpoints are read for this test: route with an endpoint lister that finds none.
    await expect(
      routeWorkspaceEvent(message, [subscriber('a', true), subscriber('b')], {
        listEndpoints: async () => [],
      }),
    ).rejects.toThrow(/subscriber\(s\) a failed/);
    expect(seen.sort()).toEqual([`a:${event.id}`, `b:${event.id}`]);
    seen.length = 0;
    const other: EventSubscriber = {
      name: 'c',
      types: ['sms.received'],
      handle: async () => void seen.push('c'),
    };
    await expect(
      routeWorkspaceEvent(message, [subscriber('b'), other], { listEndpoints: async () => [] }),
    ).resolves.toEqual({ event_id: event.id, deliveries: [], subscribers: ['b'] });
    expect(seen).toEqual([`b:${event.id}`]);
  });
});
