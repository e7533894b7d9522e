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
};
