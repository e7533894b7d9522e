import * as z from 'zod';
import type { ZodType } from 'zod';
import type { Route, RouteTable } from './http/route.js';

const ERROR = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };
const VALIDATION_ERROR = {
  type: 'object',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          input: {},
        },
        required: ['type', 'loc', 'msg', 'input'],
      },
    },
  },
  required: ['detail'],
};

const jsonSchema = (schema: ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });

function operation(name: string, route: Route<unknown, unknown>) {
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = route.query ? jsonSchema(route.query, 'input') : undefined;
  const queryParams = Object.entries((query?.properties ?? {}) as Record<string, object>).map(
    ([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      schema,
    }),
  );
  const status = String(route.successStatus ?? (route.method === 'POST' ? 201 : 200));
  const responses: Record<string, unknown> = {
    [status]: {
      description: 'Success',
      ...(route.response
        ? { content: { 'application/json': { schema: jsonSchema(route.response, 'output') } } }
        : route.contentType
          ? { content: { [route.contentType]: { schema: { type: 'string' } } } }
          : {}),
    },
    '422': { description: 'Validation error', content: { 'application/json': { schema: VALIDATION_ERROR } } },
    '500': { description: 'Internal error', content: { 'application/json': { schema: ERROR } } },
  };
  if (route.body || route.rawBody) {
    responses['415'] = {
      description: 'Unsupported media type',
      content: { 'application/json': { schema: ERROR } },
    };
  }
  if (route.auth !== 'none') {
    responses['401'] = { description: 'Unauthorized', content: { 'application/json': { schema: ERROR } } };
    responses['403'] = { description: 'Forbidden', content: { 'application/json': { schema: ERROR } } };
    responses['404'] = { description: 'Not found', content: { 'application/json': { schema: ERROR } } };
  }
  return {
    summary: route.summary,
    operationId: name,
    parameters: [...params, ...queryParams],
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: jsonSchema(route.body, 'input') },
              ...Object.fromEntries(
                (route.rawBody ?? []).map((type) => [type, { schema: { type: 'string' } }]),
              ),
            },
          },
        }
      : {}),
    ...(route.auth === 'none' ? { security: [] } : {}),
    responses,
  };
}

/** OpenAPI 3.1 document of every declared HTTP route, from the routes' own zod schemas. */
export function buildOpenApiDocument(domains: Record<string, RouteTable>) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [domain, routes] of Object.entries(domains)) {
    for (const [name, route] of Object.entries(routes)) {
      paths[route.path] ??= {};
      paths[route.path][route.method.toLowerCase()] = { ...operation(name, route), tags: [domain] };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Voice Agent Service API', version: '0.1' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A JWT from the identity provider, or an API key vak_<key_id>_<secret>',
        },
      },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
