import { jest } from '@jest/globals';
import type { Context, SQSEvent } from 'aws-lambda';
import { defineRoute, implement } from '../../functions/platform/http/index.js';
import type { HttpEvent } from '../../functions/platform/http/index.js';
import { logger, scheduledRun } from '../../functions/platform/logger.js';
import { queueConsumer } from '../../functions/platform/queue-consumer.js';

/**
 * Each log line carries its own invocation's keys: locally handlers run concurrently in one process
 * with one logger, so keys appended to it would leak from one to the next (functions/platform/logger.ts).
 */

/** A gate a handler waits at until the test opens it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function captured() {
  const lines: Record<string, unknown>[] = [];
  const spy = (chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n'))
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(spy);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(spy);
  return {
    lines,
    restore: () => {
      out.mockRestore();
      err.mockRestore();
    },
  };
}

const context = { functionName: 'test', awsRequestId: 'aws-1', getRemainingTimeInMillis: () => 10_000 };

function event(path: string, requestId: string): HttpEvent {
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: {},
    requestContext: { requestId, http: { method: 'POST', path } },
    isBase64Encoded: false,
  } as unknown as HttpEvent;
}

describe('log keys per invocation', () => {
  const previousStage = process.env.STAGE;
  beforeAll(() => {
    delete process.env.STAGE; // JSON lines
  });
  afterAll(() => {
    if (previousStage !== undefined) process.env.STAGE = previousStage;
  });

  it('two requests interleaved: each line carries its own request id and route', async () => {
    const gates = { a: gate(), b: gate() };
    const route = (path: string) =>
      defineRoute({ method: 'POST', path, summary: 'test', access: {}, auth: 'none' });
    const handlerOf = (name: 'a' | 'b') =>
      implement(route(`/${name}`), async () => {
        logger.info(`${name} begins`);
        await gates[name].opened;
        logger.info(`${name} ends`);
        return { status: 200, body: {} };
      }).handler;

    const log = captured();
    try {
      const a = handlerOf('a')(event('/a', 'req-a'), context as unknown as Context & { state: never });
      await tick();
      const b = handlerOf('b')(event('/b', 'req-b'), context as unknown as Context & { state: never });
      await tick();
      gates.a.open(); // a ends after b began
      await a;
      gates.b.open();
      await b;
    } finally {
      log.restore();
    }
    const lineOf = (message: string) => log.lines.find((line) => line.message === message);
    expect(lineOf('a begins')).toMatchObject({ request_id: 'req-a', route: 'POST /a' });
    expect(lineOf('b begins')).toMatchObject({ request_id: 'req-b', route: 'POST /b' });
    expect(lineOf('a ends')).toMatchObject({ request_id: 'req-a', route: 'POST /a' });
    expect(lineOf('b ends')).toMatchObject({ request_id: 'req-b', route: 'POST /b' });
  });

  it("a queue message and a scheduled run, during a request, carry their own ids and never the request's", async () => {
    const requestGate = gate();
    const request = implement(
      defineRoute({ method: 'POST', path: '/r', summary: 'test', access: {}, auth: 'none' }),
      async () => {
        logger.info('request begins');
        await requestGate.opened;
        logger.info('request ends');
        return { status: 200, body: {} };
      },
    ).handler;
    const consume = queueConsumer('calls', async () => {
      logger.info('dispatching');
    });
    const run = scheduledRun(async () => {
      logger.info('sweeping');
    });
    const sqs = {
      Records: [
        {
          messageId: 'msg-1',
          body: JSON.stringify({ type: 'call.dispatch', workspace_id: 'ws_1', call_id: 'call_1' }),
          attributes: { ApproximateReceiveCount: '1' },
          eventSource: 'aws:sqs',
        },
      ],
    } as unknown as SQSEvent;

    const log = captured();
    try {
      const r = request(event('/r', 'req-r'), context as unknown as Context & { state: never });
      await tick();
      await consume(sqs, context as unknown as Context);
      await run({ id: 'run-1' });
      requestGate.open();
      await r;
    } finally {
      log.restore();
    }
    const lineOf = (message: string) => log.lines.find((line) => line.message === message);
    expect(lineOf('dispatching')).toMatchObject({ queue: 'calls', messageId: 'msg-1' });
    expect(lineOf('dispatching')).not.toHaveProperty('request_id');
    expect(lineOf('sweeping')).toMatchObject({ run_id: 'run-1' });
    expect(lineOf('sweeping')).not.toHaveProperty('request_id');
    expect(lineOf('request ends')).toMatchObject({ request_id: 'req-r' });
    expect(lineOf('request ends')).not.toHaveProperty('run_id');
  });
});
