/**
 * The OpenAPI document (`GET /api/v1/openapi.json`, and docs/api.md from it) tells a developer the
 * truth about every operation: which credential and scope, every status it can answer (derived from
 * the route's declaration), a short summary, a tag named for people, and examples with real values,
 * each accepted by the route's own zod schema.
 */
import { describe, expect, it } from '@jest/globals';
import type { ZodType } from 'zod';
import { apiRoutes, apiTags } from '../../functions/api-routes.js';
import { ErrorBody, ValidationErrorBody, buildOpenApiDocument } from '../../functions/platform/openapi.js';
import type { Route } from '../../functions/platform/http/route.js';

interface MediaType {
  schema: Record<string, unknown>;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}
interface Operation {
  tags: string[];
  summary: string;
  description: string;
  operationId: string;
  security: Record<string, string[]>[];
  parameters: { name: string; in: string; required: boolean; example?: unknown }[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, Response>;
}

const document = buildOpenApiDocument(apiRoutes, apiTags);
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const entries = Object.values(apiRoutes).flatMap((routes) =>
  Object.entries(routes).map(([name, route]) => ({
    name,
    route: route as Route<unknown, unknown>,
    operation: (document.paths[route.path] as Record<string, Operation>)[route.method.toLowerCase()],
  })),
);
const each = entries.map((entry) => [entry.name, entry] as const);
const successOf = (operation: Operation) =>
  Object.entries(operation.responses).find(([status]) => /^[23]\d\d$/.test(status))!;

/** Every example in an operation, with the zod schema it must satisfy. */
function examplesOf({
  route,
  operation,
}: (typeof entries)[number]): { where: string; schema: ZodType; value: unknown }[] {
  const out: { where: string; schema: ZodType; value: unknown }[] = [];
  const body = operation.requestBody?.content['application/json'];
  if (route.body && body)
    out.push({ where: 'request body', schema: route.body as ZodType, value: body.example });
  const [status, success] = successOf(operation);
  const json = success.content?.['application/json'];
  if (route.response && json)
    out.push({ where: `${status} body`, schema: route.response, value: json.example });
  for (const [code, response] of Object.entries(operation.responses)) {
    if (!/^[45]/.test(code)) continue;
    const media = response.content?.['application/json'];
    const declared = route.errors?.[Number(code) as keyof NonNullable<Route['errors']>];
    const schema =
      code === '422'
        ? ValidationErrorBody
        : typeof declared === 'object' && declared.body
          ? declared.body
          : ErrorBody;
    if (media?.example !== undefined) out.push({ where: `${code} example`, schema, value: media.example });
    for (const [name, example] of Object.entries(media?.examples ?? {}))
      out.push({ where: `${code} example ${name}`, schema, value: example.value });
  }
  return out;
}

describe('every operation', () => {
  it.each(each)(
    '%s: a short summary, a description, a tag named for people',
    (_name, { route, operation }) => {
      expect(operation.summary).toBe(route.summary);
      expect(operation.summary.length).toBeLessThanOrEqual(50);
      expect(operation.summary).toMatch(/^[A-Z][^.]*[^.]$/);
      expect(operation.description).toContain('**Auth:**');
      expect(operation.tags).toHaveLength(1);
      expect(document.tags.map((t) => t.name)).toContain(operation.tags[0]);
      expect(operation.tags[0]).toMatch(/^[A-Z]/);
    },
  );

  it.each(each)('%s: security says which credential and which scope', (_name, { route, operation }) => {
    const schemes = operation.security.map((requirement) => Object.keys(requirement)[0]).sort();
    const expected = {
      none: [],
      user: ['userToken'],
      api_key: ['apiKey'],
      user_or_api_key: ['apiKey', 'userToken'],
    }[route.auth];
    expect(schemes).toEqual(expected);
    const key = operation.security.find((requirement) => 'apiKey' in requirement);
    if (key) expect(key.apiKey).toEqual(route.scope ? [route.scope] : []);
    if (route.auth === 'user') expect(operation.description).toContain('API keys are refused (403)');
    if (route.auth === 'api_key') expect(operation.description).toContain("A user's JWT is refused (403)");
  });

  it.each(each)(
    '%s: every status its declaration implies, each with a body',
    (_name, { route, operation }) => {
      const statuses = Object.keys(operation.responses);
      const expected = new Set(['422', '500']);
      if (route.auth !== 'none') ['401', '403'].forEach((s) => expected.add(s));
      if (/\{\w+\}/.test(route.path)) expected.add('404');
      if (WRITES.has(route.method) && route.auth !== 'none') expected.add('409');
      for (const status of Object.keys(route.errors ?? {})) expected.add(status);
      if (route.body || route.rawBody) expected.add('415');
      expect(statuses.filter((s) => /^[45]/.test(s)).sort()).toEqual([...expected].sort());
      for (const status of expected) {
        expect(operation.responses[status].content?.['application/json']).toBeDefined();
        expect(operation.responses[status].headers).toHaveProperty('x-request-id');
      }
      if (operation.responses['429'])
        expect(operation.responses['429'].headers).toHaveProperty('retry-after');
    },
  );

  it.each(each)('%s: examples with real values, each accepted by the route’s own schema', (_name, entry) => {
    const examples = examplesOf(entry);
    for (const { where, value } of examples)
      expect({ where, missing: value === undefined }).toEqual({ where, missing: false });
    for (const { where, schema, value } of examples) {
      const parsed = schema.safeParse(value);
      expect({ where, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ where, issues: [] });
      // Real values, not the placeholders a schema-only generator shows.
      expect(JSON.stringify(value)).not.toMatch(/"string"/);
    }
    for (const parameter of entry.operation.parameters.filter((p) => p.in === 'path'))
      expect(parameter.example).toEqual(expect.any(String));
  });
});

describe('statuses with their own bodies and headers', () => {
  const op = (name: string) => entries.find((entry) => entry.name === name)!.operation;

  it('a duplicate contact’s 409 carries contact_id', () => {
    const conflict = op('createContact').responses['409'].content!['application/json'];
    expect(JSON.stringify(conflict.schema)).toContain('contact_id');
    expect(Object.values(conflict.examples ?? {})[0].value).toEqual({
      error: expect.any(String),
      contact_id: expect.stringMatching(/^ct_/),
    });
  });

  it('start-call: 402, 409, 429 with Retry-After', () => {
    const responses = op('startCall').responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['402', '409', '429']));
    expect(responses['429'].headers).toHaveProperty('retry-after');
  });

  it('the trigger route takes an API key only, with its scope, and says a JWT is refused', () => {
    const trigger = op('triggerWorkflow');
    expect(trigger.security).toEqual([{ apiKey: ['workflows:trigger'] }]);
    expect(trigger.description).toContain("A user's JWT is refused (403)");
    expect(
      Object.values(trigger.responses['403'].content!['application/json'].examples!).map((e) => e.value),
    ).toEqual(
      expect.arrayContaining([
        { error: "This route takes an API key with scope workflows:trigger, not a user's token" },
      ]),
    );
    expect(Object.keys(trigger.responses)).toEqual(expect.arrayContaining(['402', '409', '413', '429']));
  });

  it('a 403 says why: the missing scope, the wrong credential kind', () => {
    const messages = (name: string) =>
      Object.values(op(name).responses['403'].content!['application/json'].examples!).map((e) => e.value);
    expect(messages('listCalls')).toContainEqual({ error: 'API key lacks required scope: calls:read' });
    expect(messages('getMe')).toContainEqual({
      error: "API keys cannot be used here: this route takes a signed-in user's token",
    });
    expect(messages('listCalls')).not.toContainEqual({ error: 'Viewers have read-only access' });
    expect(messages('createAgent')).toContainEqual({ error: 'Viewers have read-only access' });
  });
});

describe('the introduction', () => {
  it('covers auth, scopes, pagination, idempotency, errors and webhooks', () => {
    const text = document.info.description;
    for (const heading of ['Authentication', 'Scopes', 'Pagination', 'Idempotency', 'Errors', 'Webhooks'])
      expect(text).toContain(`## ${heading}`);
    expect(text).toContain('`workflows:trigger` | `triggerWorkflow`');
  });
});

describe('a setting the runtime does not use says so where it is set', () => {
  it('ambient_noise: not played (ConversationRelay has no background sound), in the create, PATCH and response schemas', () => {
    const text = JSON.stringify(document);
    const described = [...text.matchAll(/"ambient_noise":\{[^}]*"description":"([^"]*)"/g)].map((m) => m[1]);
    // Create, update and the agent view (at least): none silent.
    const all = [...text.matchAll(/"ambient_noise":\{/g)].length;
    expect(described.length).toBe(all);
    for (const description of described) expect(description).toMatch(/not played/i);
  });
});
