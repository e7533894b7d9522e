import type { FunctionSpec } from './catalog-types.js';

export type { FunctionSpec, HttpRoute, HttpMethod } from './catalog-types.js';

/**
 * Every function of the service, declared once: its handler file, its triggers and what it may touch.
 * The CDK stack (lib/stack.ts) and the local stack (lib/local/) are both built from this list, and the
 * OpenAPI document is generated from its routes. A test fails when a handler file is not named here.
 *
 * Keep entries grouped by domain, in the order of API.md.
 */
export const catalog: FunctionSpec[] = [
  // ── Health and description ────────────────────────────────────────────────────────────────
  {
    id: 'Health',
    entry: 'functions/public/handlers/health.ts',
    http: [{ method: 'GET', path: '/api/v1/health', summary: 'Health of the table, queues and bucket', auth: 'none' }],
    access: { table: 'read', bucket: 'read', sendsTo: ['calls'] },
  },
  {
    id: 'OpenApi',
    entry: 'functions/public/handlers/openapi.ts',
    http: [{ method: 'GET', path: '/api/v1/openapi.json', summary: 'OpenAPI 3.1 description of every route', auth: 'none' }],
    access: {},
  },
  // ── Identity, organisations, workspaces, members, API keys (access/, developer/) ─────────────
  // (end of access)
  // ── Agents, numbers, calls, telephony webhook, call lifecycle (agents/, numbers/, calling/) ─────
  // (end of calling)
  // ── Billing (billing/) ──────────────────────────────────────────────────────────────────────
  // (end of billing)
  // ── Post-call pipeline, webhooks out, contacts (post-call/, webhooks/, contacts/) ───────────
  // (end of post-call)
];

export const httpFunctions = () => catalog.filter((f) => f.http && f.http.length > 0);
export const queueFunctions = () => catalog.filter((f) => f.queue);
export const scheduledFunctions = () => catalog.filter((f) => f.schedule);
export const urlFunctions = () => catalog.filter((f) => f.functionUrl);
