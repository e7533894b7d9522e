/**
 * The local gateway end to end, over HTTP against the stack global-setup started: health, the OpenAPI
 * document, the gateway's own 404/405/413 answers (always JSON, never HTML) and request ids; plus the
 * route matcher's precedence rules and the local identity provider's tokens.
 */
import { httpApiEvent } from '../../lib/local/events.js';
import { Router } from '../../lib/local/router.js';
import type { FunctionSpec } from '../../lib/cloud/catalog-types.js';
import { api, baseUrl } from '../helpers/http.js';
import { subjectFor, tokenFor } from '../helpers/tokens.js';

const decodeClaims = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));

describe('platform over HTTP', () => {
  it('GET /api/v1/health is 200 {status:"ok"} once table, queue and bucket answer', async () => {
    const res = await api('GET', '/api/v1/health');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toMatchObject({ status: 'ok' });
  });

  it('GET /api/v1/openapi.json describes the API as OpenAPI 3.1.0, health included', async () => {
    const res = await api('GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.paths['/api/v1/health']).toBeDefined();
    expect(res.body.paths['/api/v1/health'].get).toBeDefined();
  });

  it('the served document says who may call each operation, every status, with examples and tags', async () => {
    const { body } = await api('GET', '/api/v1/openapi.json');
    for (const heading of ['Authentication', 'Scopes', 'Pagination', 'Idempotency', 'Errors', 'Webhooks'])
      expect(body.info.description).toContain(`## ${heading}`);
    const trigger = body.paths['/api/v1/triggers/{workflow_id}'].post;
    expect(trigger).toMatchObject({ tags: ['Workflows'], summary: 'Trigger an external workflow' });
    expect(trigger.security).toEqual([{ apiKey: ['workflows:trigger'] }]);
    expect(trigger.responses['429'].headers['retry-after']).toBeDefined();
    const createContact = body.paths['/api/v1/workspaces/{workspace_id}/contacts'].post;
    expect(createContact.security).toEqual([{ userToken: [] }, { apiKey: ['contacts:write'] }]);
    expect(createContact.requestBody.content['application/json'].example).toMatchObject({
      phone: '+61491570156',
    });
    expect(JSON.stringify(createContact.responses['409'])).toContain('contact_id');
    expect(body.tags.map((tag: { name: string }) => tag.name)).toEqual(
      expect.arrayContaining(['Calls', 'Contacts', 'Workflows']),
    );
  });

  it('GET /api/v1/docs is the Redoc page; its script comes from our own route, gzipped and cached', async () => {
    const page = await fetch(`${baseUrl()}/api/v1/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<redoc spec-url="/api/v1/openapi.json"');
    const src = /<script src="([^"]+)"><\/script>/.exec(html)?.[1] ?? '';
    expect(src).toMatch(/^\/api\/v1\/docs\/viewer\.js\?v=[0-9a-f]{16}$/);

    const script = await fetch(`${baseUrl()}${src}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const text = await script.text(); // fetch has gunzipped it
    expect(text.length).toBeGreaterThan(500_000);
    expect(text.includes('spec-url')).toBe(true);
  });

  it('an unknown route is a JSON 404, even for a browser', async () => {
    const res = await api('GET', '/api/v1/no-such-thing', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toEqual({ error: 'Not found' });
  });

  it('a known path with the wrong method is a JSON 405', async () => {
    const res = await api('DELETE', '/api/v1/health');
    expect(res.status).toBe(405);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toEqual({ error: 'Method not allowed' });
    expect(res.headers.allow).toContain('GET');
  });

  it('paths match exactly: a trailing slash or another prefix is a 404', async () => {
    expect((await api('GET', '/api/v1/health/')).status).toBe(404);
    expect((await api('GET', '/api/v2/health')).status).toBe(404);
  });

  it('every response carries x-request-id, a new one per request', async () => {
    const responses = await Promise.all([
      api('GET', '/api/v1/health'),
      api('GET', '/api/v1/health'),
      api('GET', '/api/v1/nope'),
      api('POST', '/api/v1/health'),
    ]);
    const ids = responses.map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/\S{8,}/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a body over 6 MB is refused with a JSON 413', async () => {
    const res = await api('POST', '/api/v1/health', { rawBody: 'x'.repeat(6 * 1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toContain('application/json');
  });
});

describe('local identity provider', () => {
  it('issues Cognito-style access tokens with a stable subject per email', async () => {
    const token = await tokenFor('Dev@Example.com');
    const claims = decodeClaims(token);
    expect(claims).toMatchObject({
      sub: subjectFor('dev@example.com'),
      email: 'Dev@Example.com',
      token_use: 'access',
      client_id: process.env.JWT_CLIENT_ID,
      iss: process.env.JWT_ISSUER,
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(decodeClaims(await tokenFor('dev@example.com')).sub).toBe(claims.sub);
  });

  it('lets tests override token_use, client_id and expires_in', async () => {
    const claims = decodeClaims(
      await tokenFor('a@example.com', { token_use: 'id', client_id: 'x', expires_in: -30 }),
    );
    expect(claims.token_use).toBe('id');
    expect(claims.aud).toBe('x');
    expect(claims.exp).toBeLessThan(Math.floor(Date.now() / 1000));
  });
});

describe('sharp edges of request parsing, through the gateway', () => {
  const email = `edges-${Date.now()}@example.com`;

  it('?limit=abc is 422 and echoes what was sent ("abc"), not null', async () => {
    const token = await tokenFor(email);
    const res = await api('GET', '/api/v1/organisations?limit=abc', { token });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'limit'], input: 'abc' })]);
  });

  it('a name nested 5,000 levels deep is 422 json_invalid and creates nothing', async () => {
    const token = await tokenFor(email);
    const before = await api('GET', '/api/v1/organisations', { token });
    const deep = `{"name":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await api('POST', '/api/v1/organisations', {
      token,
      rawBody: deep,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 0] });
    const after = await api('GET', '/api/v1/organisations', { token });
    expect(after.body.items).toEqual(before.body.items);
  });
});

describe('gateway route matching', () => {
  const fn = (id: string, http: FunctionSpec['http'], functionUrl?: string): FunctionSpec => ({
    id,
    entry: `functions/x/handlers/${id}.ts`,
    http,
    group: 'public',
    functionUrl: functionUrl ? { path: functionUrl } : undefined,
    access: {},
  });
  const router = new Router([
    fn('GetAgent', [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
        summary: '',
        auth: 'user',
        access: {},
      },
    ]),
    fn('SearchAgents', [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/agents/search',
        summary: '',
        auth: 'user',
        access: {},
      },
    ]),
    fn('DeleteAgent', [
      {
        method: 'DELETE',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
        summary: '',
        auth: 'user',
        access: {},
      },
    ]),
    fn('Voice', undefined, '/webhooks/telephony/voice'),
  ]);

  it('prefers static segments over {param} segments', () => {
    const match = router.match('GET', '/api/v1/workspaces/ws_1/agents/search');
    expect(match).toMatchObject({
      kind: 'match',
      target: { fn: { id: 'SearchAgents' } },
      pathParameters: { workspace_id: 'ws_1' },
    });
  });

  it('extracts decoded path parameters', () => {
    const match = router.match('GET', '/api/v1/workspaces/ws_1/agents/ag%201');
    expect(match).toMatchObject({
      kind: 'match',
      target: { fn: { id: 'GetAgent' } },
      pathParameters: { agent_id: 'ag 1' },
    });
  });

  it('falls back to a {param} route of the right method before answering 405', () => {
    expect(router.match('DELETE', '/api/v1/workspaces/ws_1/agents/search')).toMatchObject({
      kind: 'match',
      target: { fn: { id: 'DeleteAgent' } },
    });
    expect(router.match('PUT', '/api/v1/workspaces/ws_1/agents/ag_1')).toEqual({
      kind: 'method-not-allowed',
      allowed: expect.arrayContaining(['GET', 'DELETE']),
    });
  });

  it('serves function URLs on any method with routeKey $default', () => {
    expect(router.match('POST', '/webhooks/telephony/voice')).toMatchObject({
      kind: 'match',
      target: { routeKey: '$default' },
    });
    expect(router.match('POST', '/webhooks/telephony')).toEqual({ kind: 'not-found' });
  });
});

describe('gateway events (API Gateway HTTP API payload 2.0)', () => {
  const target = {
    fn: { id: 'GetAgent', entry: 'x.ts', group: 'agents' as const, access: {} },
    routeKey: 'GET /api/v1/agents/{agent_id}',
    method: 'GET' as const,
    pattern: '/api/v1/agents/{agent_id}',
    kind: 'route' as const,
  };

  it('carries the raw path and query, comma-joined repeated parameters, lower-cased headers and cookies', () => {
    const event = httpApiEvent(
      {
        method: 'get',
        url: '/api/v1/agents/ag_1?limit=5&tag=a&tag=b&q=hello%20world',
        headers: { host: '127.0.0.1:3000', 'X-Custom': 'Yes', cookie: 'a=1; b=2' },
        body: Buffer.alloc(0),
        sourceIp: '127.0.0.1',
        requestId: 'req-1',
      },
      target,
      { agent_id: 'ag_1' },
    );
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'GET /api/v1/agents/{agent_id}',
      rawPath: '/api/v1/agents/ag_1',
      rawQueryString: 'limit=5&tag=a&tag=b&q=hello%20world',
      queryStringParameters: { limit: '5', tag: 'a,b', q: 'hello world' },
      pathParameters: { agent_id: 'ag_1' },
      cookies: ['a=1', 'b=2'],
      isBase64Encoded: false,
      requestContext: {
        requestId: 'req-1',
        http: { method: 'GET', path: '/api/v1/agents/ag_1', sourceIp: '127.0.0.1' },
      },
    });
    expect(event.headers['x-custom']).toBe('Yes');
    expect(event.body).toBeUndefined();
    expect(typeof event.requestContext.timeEpoch).toBe('number');
  });

  it('passes JSON and form bodies as text and binary bodies as base64', () => {
    const request = (contentType: string, body: Buffer) =>
      httpApiEvent(
        { method: 'POST', url: '/x', headers: { 'content-type': contentType }, body, sourceIp: '127.0.0.1' },
        target,
        {},
      );
    expect(request('application/json', Buffer.from('{"a":1}'))).toMatchObject({
      body: '{"a":1}',
      isBase64Encoded: false,
    });
    expect(request('application/x-www-form-urlencoded', Buffer.from('a=1'))).toMatchObject({
      body: 'a=1',
      isBase64Encoded: false,
    });
    expect(request('audio/wav', Buffer.from([0, 1, 2, 255]))).toMatchObject({
      body: 'AAEC/w==',
      isBase64Encoded: true,
    });
  });
});
