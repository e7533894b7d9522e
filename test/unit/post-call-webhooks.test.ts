import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import {
  effectivePort,
  isAllowedHost,
  parseAllowedHosts,
  withAllowedHost,
} from '../../functions/platform/outbound-http/allow-list.js';
import {
  classifyStatus,
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  JITTER_RATIO,
  maxAttemptsFor,
  nextStep,
  parseRetryAfter,
  parseRetrySchedule,
  sqsDelayFor,
  withJitter,
} from '../../functions/webhook-deliveries/retry.js';
import {
  activeSecrets,
  newSigningSecret,
  signatureHeaders,
  verifySignedRequest,
} from '../../functions/webhook-deliveries/signing.js';

describe('the retry schedule', () => {
  it('defaults to eight attempts spread over more than 24 hours', () => {
    const schedule = parseRetrySchedule(undefined);
    expect(schedule).toEqual([...DEFAULT_RETRY_SCHEDULE_SECONDS]);
    expect(maxAttemptsFor(schedule)).toBe(8);
    expect(schedule.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * 3600);
  });

  it('reads WEBHOOK_RETRY_SCHEDULE (tests compress it) and refuses nonsense', () => {
    expect(parseRetrySchedule('1,1,1')).toEqual([1, 1, 1]);
    expect(maxAttemptsFor(parseRetrySchedule(' 1, 2 ,3'))).toBe(4);
    expect(() => parseRetrySchedule('1,,2')).toThrow();
    expect(() => parseRetrySchedule('1,-2')).toThrow();
    expect(() => parseRetrySchedule('soon')).toThrow();
  });

  it('stretches each wait by up to 20 % and never shortens it', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 100_000, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (seconds, random) => {
          const delay = withJitter(seconds, random);
          expect(delay).toBeGreaterThanOrEqual(seconds);
          expect(delay).toBeLessThanOrEqual(seconds * (1 + JITTER_RATIO));
        },
      ),
    );
  });
});

describe('what an attempt leads to', () => {
  const schedule = [1, 1, 1];

  it.each([200, 201, 204, 299])('%i succeeds', (status) => {
    expect(classifyStatus(status)).toEqual({ kind: 'succeeded' });
  });

  it.each([500, 502, 503, 504, 408, 409, 429, 301, 302, 307, 308])('%i is retried', (status) => {
    expect(classifyStatus(status).kind).toBe('retryable');
  });

  it.each([400, 401, 403, 404, 405, 413, 422])('%i is not retried', (status) => {
    expect(classifyStatus(status)).toEqual({ kind: 'rejected' });
  });

  it('410 disables the endpoint; no response (timeout, network) is retried', () => {
    expect(classifyStatus(410)).toEqual({ kind: 'gone' });
    expect(classifyStatus(undefined)).toEqual({ kind: 'retryable' });
  });

  it('retries on the schedule, then is dead after the last attempt', () => {
    const outcome = { kind: 'retryable' as const };
    expect(nextStep(outcome, 1, schedule, 0)).toEqual({ kind: 'retry', delaySeconds: 1 });
    expect(nextStep(outcome, 3, schedule, 0.5)).toEqual({ kind: 'retry', delaySeconds: 1.1 });
    expect(nextStep(outcome, 4, schedule, 0)).toEqual({ kind: 'dead', reason: 'exhausted' });
    expect(nextStep({ kind: 'rejected' }, 1, schedule)).toEqual({ kind: 'dead', reason: 'rejected' });
    expect(nextStep({ kind: 'gone' }, 1, schedule)).toEqual({ kind: 'dead', reason: 'gone' });
    expect(nextStep({ kind: 'refused' }, 1, schedule)).toEqual({ kind: 'dead', reason: 'refused' });
  });

  it('honours a Retry-After longer than the scheduled wait', () => {
    const now = new Date('2026-11-22T01:30:00.000Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Sun, 22 Nov 2026 01:31:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('Sun, 22 Nov 2026 01:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('whenever', now)).toBeUndefined();
    expect(parseRetryAfter('99999999', now)).toBe(24 * 3600);
    expect(nextStep(classifyStatus(429, 120), 1, schedule, 0)).toEqual({ kind: 'retry', delaySeconds: 120 });
    expect(nextStep(classifyStatus(503, 0), 1, [600], 0)).toEqual({ kind: 'retry', delaySeconds: 600 });
  });

  it('waits longer than 15 minutes by delaying at most 900 s at a time', () => {
    const now = new Date('2026-11-22T00:00:00.000Z');
    expect(sqsDelayFor(new Date(now.getTime() + 3_600_000), now)).toBe(900);
    expect(sqsDelayFor(new Date(now.getTime() + 2_500), now)).toBe(3);
    expect(sqsDelayFor(new Date(now.getTime() - 5_000), now)).toBe(0);
  });
});

describe('WEBHOOK_ALLOWED_HOSTS', () => {
  it('allows exactly the listed host and port (or any port with *)', () => {
    const allowed = parseAllowedHosts('127.0.0.1:*, localhost:8080,[::1]:9000');
    expect(isAllowedHost(new URL('http://127.0.0.1:5000/x'), allowed)).toBe(true);
    expect(isAllowedHost(new URL('http://localhost:8080/'), allowed)).toBe(true);
    expect(isAllowedHost(new URL('http://LOCALHOST:8080/'), allowed)).toBe(true);
    expect(isAllowedHost(new URL('http://localhost:8081/'), allowed)).toBe(false);
    expect(isAllowedHost(new URL('http://[::1]:9000/'), allowed)).toBe(true);
    expect(isAllowedHost(new URL('http://127.0.0.2:5000/'), allowed)).toBe(false);
    expect(isAllowedHost(new URL('http://169.254.169.254/'), allowed)).toBe(false);
    expect(isAllowedHost(new URL('http://127.0.0.1:5000/'), [])).toBe(false);
  });

  it('knows default ports and refuses entries without one', () => {
    expect(effectivePort(new URL('https://example.com/'))).toBe('443');
    expect(effectivePort(new URL('http://example.com/'))).toBe('80');
    expect(isAllowedHost(new URL('https://hooks.internal/'), parseAllowedHosts('hooks.internal:443'))).toBe(
      true,
    );
    expect(() => parseAllowedHosts('localhost')).toThrow();
    expect(() => parseAllowedHosts('localhost:http')).toThrow();
    expect(parseAllowedHosts('')).toEqual([]);
  });

  it('adds a host:port unless it is already covered', () => {
    expect(withAllowedHost('127.0.0.1:*', '127.0.0.1', 4000)).toBe('127.0.0.1:*');
    expect(withAllowedHost('', '127.0.0.1', 4000)).toBe('127.0.0.1:4000');
    expect(withAllowedHost('example.com:443', '127.0.0.1', 4000)).toBe('example.com:443,127.0.0.1:4000');
  });
});

describe('Standard Webhooks signatures', () => {
  const body = JSON.stringify({ type: 'call.ended', data: { call_id: 'call_1' } });
  const now = new Date();

  it('are verified by the standardwebhooks library with the workspace secret', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signatureHeaders({
      webhookId: 'msg_1',
      timestamp: now,
      payload: body,
      secrets: [secret],
    });
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, { ...headers })).toThrow();
    expect(() => verifySignedRequest(secret, `${body} `, { ...headers })).toThrow();
  });

  it('carry two v1 signatures during the 24 hours after a rotation, each valid for its own secret', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const record = {
      secret: current,
      previousSecret: previous,
      previousExpiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    };
    const secrets = activeSecrets(record, now);
    expect(secrets).toEqual([current, previous]);
    const headers = signatureHeaders({ webhookId: 'msg_2', timestamp: now, payload: body, secrets });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature'].split(' ').every((s) => s.startsWith('v1,'))).toBe(true);
    expect(verifySignedRequest(current, body, { ...headers })).toEqual(JSON.parse(body));
    expect(verifySignedRequest(previous, body, { ...headers })).toEqual(JSON.parse(body));
    expect(activeSecrets(record, new Date(now.getTime() + 3_600_001))).toEqual([current]);
  });
});
