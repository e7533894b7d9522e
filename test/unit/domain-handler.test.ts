/**
 * A domain's HTTP function serves exactly the routes its routes.ts declares, each through the
 * middleware its declaration describes: the runtime reads the same object the catalog, the OpenAPI
 * document and the gateway read, so they cannot drift.
 */
import type { Context } from 'aws-lambda';
import { pathToFileURL } from 'node:url';
import * as path from 'node:path';
import { catalog } from '../../lib/cloud/catalog.js';
import {
  defineRoute,
  domainHandler,
  implement,
  type HttpEvent,
} from '../../functions/platform/http/index.js';
import type { HttpContext } from '../../functions/platform/http/types.js';

const context = { functionName: 'test', awsRequestId: 'aws-1' } as unknown as Context as HttpContext;

const event = (routeKey: string): HttpEvent =>
  ({
    version: '2.0',
    routeKey,
    rawPath: '/x',
    rawQueryString: '',
    headers: {},
    requestContext: { requestId: 'req-1', http: { method: 'GET', path: '/x' } },
    isBase64Encoded: false,
  }) as unknown as HttpEvent;

const routes = {
  ping: defineRoute({ method: 'GET', path: '/api/v1/ping', summary: 'ping', auth: 'none', access: {} }),
  pong: defineRoute({ method: 'POST', path: '/api/v1/pong', summary: 'pong', auth: 'none', access: {} }),
};
const ping = implement(routes.ping, async () => ({ status: 200, body: { ping: true } }));
const pong = implement(routes.pong, async () => ({ status: 201, body: { pong: true } }));

describe('domainHandler', () => {
  test('dispatches on the routeKey API Gateway matched', async () => {
    const handler = domainHandler(routes, { ping, pong });
    const first = await handler(event('GET /api/v1/ping'), context);
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(String(first.body))).toEqual({ ping: true });
    const second = await handler(event('POST /api/v1/pong'), context);
    expect(second.statusCode).toBe(201);
  });

  test('an undeclared routeKey is a 404, never another route', async () => {
    const handler = domainHandler(routes, { ping, pong });
    const response = await handler(event('GET /api/v1/pong'), context);
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(String(response.body))).toEqual({ error: 'Not found' });
  });

  test('a route served by another route’s implementation fails when the module loads', () => {
    expect(() => domainHandler(routes, { ping, pong: ping })).toThrow(/pong .*has no handler of its own/);
  });

  test('a route module is imported on its first request and must implement its own route', async () => {
    let imports = 0;
    const handler = domainHandler(routes, {
      ping: async () => {
        imports += 1;
        return { handler: ping };
      },
      pong: async () => ({ handler: ping }),
    });
    expect(imports).toBe(0);
    expect((await handler(event('GET /api/v1/ping'), context)).statusCode).toBe(200);
    expect((await handler(event('GET /api/v1/ping'), context)).statusCode).toBe(200);
    expect(imports).toBe(1);
    await expect(handler(event('POST /api/v1/pong'), context)).rejects.toThrow(
      /pong .*has no handler of its own/,
    );
    await expect(handler.loadAll()).rejects.toThrow(/pong .*has no handler of its own/);
  });

  test('an implementation without a declared route fails when the module loads', () => {
    const extra = { ping, pong, stray: ping } as unknown as { ping: typeof ping; pong: typeof pong };
    expect(() => domainHandler(routes, extra)).toThrow(/without a declared route: stray/);
  });
});

describe('every HTTP function of the catalog', () => {
  const httpFunctions = catalog.filter((spec) => spec.http && spec.http.length > 0);

  test.each(httpFunctions.map((spec) => [spec.id, spec] as const))(
    '%s loads (each declared route has its own implementation) and answers 404 off its routes',
    async (_id, spec) => {
      const module = (await import(pathToFileURL(path.resolve(spec.entry)).href)) as {
        handler: ((event: HttpEvent, context: HttpContext) => Promise<{ statusCode?: number }>) & {
          loadAll?: () => Promise<void>;
        };
      };
      const response = await module.handler(event('GET /api/v1/not-a-route'), context);
      expect(response.statusCode).toBe(404);
      // Route modules are imported on their first request: each must implement its own route.
      if (module.handler.loadAll) await module.handler.loadAll();
    },
  );
});
