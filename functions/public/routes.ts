import * as z from 'zod';
import { defineRoute } from '../platform/http/route.js';

const ok = z.literal('ok');

export const HealthResponse = z.object({
  status: ok,
  checks: z.object({ table: ok, queue: ok, bucket: ok }),
});

/** The OpenAPI document (functions/platform/openapi.ts), described by its top-level fields only. */
export const OpenApiResponse = z.looseObject({
  openapi: z.string(),
  info: z.object({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export const publicRoutes = {
  health: defineRoute({
    method: 'GET',
    path: '/api/v1/health',
    summary: 'Check health',
    description: 'Health of the table, queues and bucket',
    auth: 'none',
    response: HealthResponse,
    errors: { 503: 'A dependency (table, queue, bucket) does not answer' },
    access: { table: 'read', bucket: 'read', sendsTo: ['calls'] },
  }),
  openApi: defineRoute({
    method: 'GET',
    path: '/api/v1/openapi.json',
    summary: 'Get the OpenAPI document',
    description: 'OpenAPI 3.1 description of every route',
    auth: 'none',
    response: OpenApiResponse,
    access: {},
  }),
  docs: defineRoute({
    method: 'GET',
    path: '/api/v1/docs',
    summary: 'API reference page',
    description: 'Interactive API reference (Redoc) of the OpenAPI document',
    auth: 'none',
    contentType: 'text/html',
    access: {},
  }),
  docsViewer: defineRoute({
    method: 'GET',
    path: '/api/v1/docs/viewer.js',
    summary: "API reference page's script",
    description:
      "The API reference's script (Redoc's standalone bundle); `v` is its version, cached for a year",
    auth: 'none',
    query: z.strictObject({ v: z.string().max(64).optional() }),
    contentType: 'text/javascript',
    access: {},
  }),
};
