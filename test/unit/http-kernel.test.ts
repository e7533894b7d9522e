import { z } from 'zod';
import type { Context } from 'aws-lambda';
import { defineRoute, implement, type RouteAuth } from '../../functions/platform/http/index.js';
import { conflict, HttpError, notFound } from '../../functions/platform/errors.js';
import { ECHO_LIMITS, TRUNCATED } from '../../functions/platform/bounded-input.js';
import { MAX_JSON_DEPTH } from '../../functions/platform/http/json-body.js';
import type { HttpEvent, HttpResponse } from '../../functions/platform/http/index.js';

const Body = z.strictObject({
  to_phone: z.string(),
  record: z.boolean().nullish(),
  parameters: z.record(z.string(), z.string()).nullish(),
});

/** A test route at `POST /test` with the given options. */
const testRoute = <B = undefined, A extends RouteAuth = 'none'>(options: { auth: A; body?: z.ZodType<B> }) =>
  defineRoute<B, undefined, A>({ method: 'POST', path: '/test', summary: 'test', access: {}, ...options });

const echo = implement(testRoute({ auth: 'none', body: Body }), async ({ body }) => ({ status: 201, body }));
const failing = implement(testRoute({ auth: 'none' }), async () => {
  throw new Error('database exploded: secret detail');
});
const missing = implement(testRoute({ auth: 'none' }), async () => {
  throw notFound('Agent');
});
const limited = implement(testRoute({ auth: 'none' }), async () => {
  throw new HttpError(429, 'Too many concurrent calls', { 'retry-after': '5' });
});
const duplicate = implement(testRoute({ auth: 'none' }), async () => {
  throw conflict('Contact already exists', { contact_id: 'ct_1', error: 'never replaces the message' });
});
const guarded = implement(testRoute({ auth: 'user_or_api_key', body: Body }), async () => ({
  status: 200,
  body: {},
}));

function event(body?: string, headers: Record<string, string> = {}): HttpEvent {
  return {
    version: '2.0',
    routeKey: 'POST /test',
    rawPath: '/test',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: { requestId: 'req-1', http: { method: 'POST', path: '/test' } },
    body,
    isBase64Encoded: false,
  } as unknown as HttpEvent;
}

// A plain Lambda context, as Lambda passes it: the kernel adds its own request state.
const context = {
  functionName: 'test',
  awsRequestId: 'aws-1',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context & {
  state: never;
};

async function call(handler: typeof echo, body?: string, headers?: Record<string, string>) {
  const response = (await handler.handler(event(body, headers), context)) as HttpResponse & {
    statusCode: number;
    body: string;
  };
  return {
    status: response.statusCode,
    headers: response.headers ?? {},
    json: response.body ? JSON.parse(response.body) : undefined,
  };
}

describe('the HTTP kernel (a real middy handler)', () => {
  it('passes a valid body to the handler and tags the response with the request id', async () => {
    const res = await call(echo, JSON.stringify({ to_phone: '+61491570156' }));
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ to_phone: '+61491570156' });
    expect(res.headers['x-request-id']).toBe('req-1');
  });

  it('answers a body that is not JSON with 422 json_invalid', async () => {
    const res = await call(echo, '{"to_phone": ');
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 0] });
  });

  it('answers a body that is not valid UTF-8 with 422 json_invalid (no replacement characters)', async () => {
    // {"to_phone": "+6149\xff\xfe"}: bytes no UTF-8 text has, as the gateway hands them over (base64).
    const bytes = Buffer.concat([
      Buffer.from('{"to_phone": "+6149'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const response = (await echo.handler(
      { ...event(), body: bytes.toString('base64'), isBase64Encoded: true } as HttpEvent,
      context,
    )) as HttpResponse & { statusCode: number; body: string };
    expect(response.statusCode).toBe(422);
    expect(JSON.parse(response.body).detail[0]).toMatchObject({
      type: 'json_invalid',
      loc: ['body', 0],
      msg: 'JSON decode error: the body is not valid UTF-8',
    });
    // Valid UTF-8 sent base64-encoded is read as before.
    const fine = Buffer.from(JSON.stringify({ to_phone: '+61491570156 ü' })).toString('base64');
    const ok = (await echo.handler(
      { ...event(), body: fine, isBase64Encoded: true } as HttpEvent,
      context,
    )) as {
      statusCode: number;
    };
    expect(ok.statusCode).toBe(201);
  });

  it('answers a body of another media type than JSON with 415, and reads JSON types and an absent type as JSON', async () => {
    const body = JSON.stringify({ to_phone: '+61491570156' });
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await call(echo, body, { 'content-type': type });
      expect(res.status).toBe(415);
      expect(res.json.error).toBe(
        `Unsupported media type ${type.split(';')[0].toLowerCase()}: this route takes application/json`,
      );
    }
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json', '']) {
      expect((await call(echo, body, { 'content-type': type })).status).toBe(201);
    }
  });

  it('refuses a body nested past MAX_JSON_DEPTH with 422 json_invalid, never a 500 (5,000 levels)', async () => {
    const deep = `{"to_phone":"+61491570156","parameters":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await call(echo, deep);
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([
      expect.objectContaining({ type: 'json_invalid', loc: ['body', 0], ctx: { max_depth: MAX_JSON_DEPTH } }),
    ]);
    const atLimit = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expect((await call(echo, atLimit)).json.detail[0].type).not.toBe('json_invalid');
  });

  it('bounds what a 422 echoes of a large invalid body, marking what it cut', async () => {
    const huge = { to_phone: 'x'.repeat(700_000), record: Array.from({ length: 5000 }, (_, i) => ({ i })) };
    const body = JSON.stringify(huge);
    expect(body.length).toBeGreaterThan(700_000);
    const res = await call(echo, body);
    expect(res.status).toBe(422);
    const echoed = JSON.stringify(res.json);
    expect(echoed.length).toBeLessThan(5_000);
    expect(echoed).toContain(TRUNCATED);
    const record = res.json.detail.find((d: { loc: string[] }) => d.loc.join('.') === 'body.record');
    expect(record.input).toHaveLength(ECHO_LIMITS.entries + 1);
    expect(record.input[ECHO_LIMITS.entries]).toBe(TRUNCATED);
  });

  it('reports a missing field in the spec shape, with the enclosing object as input', async () => {
    const res = await call(echo, JSON.stringify({ record: true }));
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      detail: [
        { type: 'missing', loc: ['body', 'to_phone'], msg: 'Field required', input: { record: true } },
      ],
    });
  });

  it('reports each problem as its own entry', async () => {
    const res = await call(
      echo,
      JSON.stringify({ to_phone: 5, record: 'yes', parameters: { a: 1 }, extra: 'x' }),
    );
    expect(res.status).toBe(422);
    const byLoc = Object.fromEntries(
      res.json.detail.map((d: { loc: string[]; type: string }) => [d.loc.join('.'), d.type]),
    );
    expect(byLoc).toEqual({
      'body.to_phone': 'string_type',
      'body.record': 'bool_type',
      'body.parameters.a': 'string_type',
      'body.extra': 'extra_forbidden',
    });
  });

  it('answers a body that is not an object with a body-level entry', async () => {
    const res = await call(echo, JSON.stringify([1, 2]));
    expect(res.status).toBe(422);
    expect(res.json.detail[0].loc).toEqual(['body']);
  });

  it('answers a missing body with body: Field required', async () => {
    const res = await call(echo);
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ type: 'missing', loc: ['body'], msg: 'Field required' });
  });

  it('maps domain errors to {error} and keeps their headers', async () => {
    expect(await call(missing)).toMatchObject({ status: 404, json: { error: 'Agent not found' } });
    const res = await call(limited);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('5');
  });

  it('puts an error’s details beside `error` (a 409 names the record that exists)', async () => {
    expect(await call(duplicate)).toMatchObject({
      status: 409,
      json: { error: 'Contact already exists', contact_id: 'ct_1' },
    });
  });

  it('hides the cause of a crash behind the spec message', async () => {
    const res = await call(failing);
    expect(res).toMatchObject({
      status: 500,
      json: { error: 'Internal server error. Please try again later.' },
    });
    expect(JSON.stringify(res.json)).not.toContain('secret detail');
  });

  it('checks the credential before the body: no token is 401 even with a bad body', async () => {
    const res = await call(guarded, 'not json');
    expect(res).toMatchObject({ status: 401, json: { error: 'Unauthorized' } });
    const malformed = await call(guarded, '{}', { authorization: 'Bearer vak_nonsense' });
    expect(malformed).toMatchObject({ status: 401, json: { error: 'Unauthorized' } });
  });
});
