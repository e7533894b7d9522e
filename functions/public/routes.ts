import { z } from 'zod';
import { defineRoute } from '../platform/http/route.js';

export const publicRoutes = {
  health: defineRoute({
    method: 'GET',
    path: '/api/v1/health',
    summary: 'Health of the table, queues and bucket',
    auth: 'none',
    access: { table: 'read', bucket: 'read', sendsTo: ['calls'] },
  }),
  openApi: defineRoute({
    method: 'GET',
    path: '/api/v1/openapi.json',
    summary: 'OpenAPI 3.1 description of every route',
    auth: 'none',
    access: {},
  }),
  docs: defineRoute({
    method: 'GET',
    path: '/api/v1/docs',
    summary: 'Interactive API reference (Redoc) of the OpenAPI document',
    auth: 'none',
    contentType: 'text/html',
    access: {},
  }),
  docsViewer: defineRoute({
    method: 'GET',
    path: '/api/v1/docs/viewer.js',
    summary: "The API reference's script (Redoc's standalone bundle); `v` is its version, cached for a year",
    auth: 'none',
    query: z.strictObject({ v: z.string().max(64).optional() }),
    contentType: 'text/javascript',
    access: {},
  }),
};
