import * as z from 'zod';
import type { ZodType } from 'zod';
import { API_KEY_SCOPES } from './auth/principal.js';
import {
  API_KEY_WRONG_WORKSPACE,
  USERS_ONLY,
  apiKeyLacksScope,
  apiKeyRequired,
} from './http/authenticate.js';
import type { Route, RouteError, RouteTable } from './http/route.js';
import { INTERNAL_ERROR_MESSAGE, VIEWER_READ_ONLY_MESSAGE } from './errors.js';
import { exampleFor, pathParameterExample } from './openapi-examples.js';
import { documentedAs } from './documentation.js';

/** A JSON Schema object as zod writes it. */
export type JsonSchema = Record<string, unknown>;

/** `{ "error": message }`: every error but a validation error. */
export const ErrorBody = z.object({ error: z.string().meta({ examples: ['Workspace not found'] }) });

/** 422: every problem of the request at once (pydantic's shape). */
export const ValidationErrorBody = z.object({
  detail: z.array(
    z.object({
      type: z.string().meta({ examples: ['missing'] }),
      loc: z.array(z.union([z.string(), z.number().int()])).meta({ examples: [['body', 'name']] }),
      msg: z.string().meta({ examples: ['Field required'] }),
      input: z.unknown(),
    }),
  ),
});

/**
 * A zod schema as JSON Schema. A schema's own examples and title are kept in the input view too (zod
 * drops them there when a field transforms its value; the examples are of what a client sends).
 */
export const jsonSchema = (schema: ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: (ctx) => {
      const documented = documentedAs.get(ctx.zodSchema);
      if (documented) {
        for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonSchema)[key];
        ctx.jsonSchema.oneOf = documented.oneOf().map((variant) => jsonSchema(variant as ZodType, io));
        return;
      }
      const meta = z.globalRegistry.get(ctx.zodSchema);
      if (meta?.examples !== undefined && ctx.jsonSchema.examples === undefined)
        ctx.jsonSchema.examples = meta.examples as unknown[];
      if (meta?.title !== undefined && ctx.jsonSchema.title === undefined) ctx.jsonSchema.title = meta.title;
    },
  }) as JsonSchema;
  return json;
};

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Who may call a route, in one sentence (the reference's "Auth" line and the operation's description). */
export function authText(route: Pick<Route, 'auth' | 'scope'>): string {
  const scope = route.scope ? ` with scope \`${route.scope}\`` : '';
  switch (route.auth) {
    case 'none':
      return 'None (public).';
    case 'user':
      return "A dashboard user's JWT. API keys are refused (403).";
    case 'api_key':
      return `An API key of the workspace${scope}. A user's JWT is refused (403).`;
    case 'user_or_api_key':
      return `A dashboard user's JWT, or an API key of the workspace${scope}.`;
  }
}

/** The OpenAPI security requirement of a route: which credential, and an API key's scope. */
function securityOf(route: Route<unknown, unknown>): Record<string, string[]>[] {
  const key = { apiKey: route.scope ? [route.scope] : [] };
  switch (route.auth) {
    case 'none':
      return [];
    case 'user':
      return [{ userToken: [] }];
    case 'api_key':
      return [key];
    case 'user_or_api_key':
      return [{ userToken: [] }, key];
  }
}

const REQUEST_ID = { $ref: '#/components/headers/RequestId' };

function errorResponse(description: string, examples: Record<string, string>, schema = ErrorBody) {
  return {
    description,
    headers: { 'x-request-id': REQUEST_ID },
    content: {
      'application/json': {
        schema: jsonSchema(schema, 'output'),
        examples: Object.fromEntries(
          Object.entries(examples).map(([name, error]) => [name, { summary: error, value: { error } }]),
        ),
      },
    },
  };
}

/** `{workspace_id}` → `Workspace not found`: what a path's last id answers when unknown. */
const notFoundMessage = (path: string): string => {
  const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const last = (params.at(-1) ?? 'resource').replace(/_id$/, '').replace(/^kb$/, 'knowledge_base');
  const thing = last.replace(/_/g, ' ');
  return `${thing[0].toUpperCase()}${thing.slice(1)} not found`;
};

const asRouteError = (value: string | RouteError): RouteError =>
  typeof value === 'string' ? { when: value } : value;

/** Every status a route can answer, from its declaration: auth, path, body, idempotency, `errors`. */
function responsesOf(route: Route<unknown, unknown>, success: Record<string, unknown>) {
  const status = String(route.successStatus ?? (route.method === 'POST' ? 201 : 200));
  const responses: Record<string, unknown> = { [status]: success };
  const declared = Object.fromEntries(
    Object.entries(route.errors ?? {}).map(([code, value]) => [code, asRouteError(value)]),
  );
  const hasPathIds = /\{\w+\}/.test(route.path);
  if (route.auth !== 'none') {
    responses['401'] = errorResponse(
      'No credential, or one that is malformed, expired, unknown or revoked.',
      {
        unauthorized: 'Unauthorized',
      },
    );
    const reasons: Record<string, string> = {};
    if (route.auth === 'user') reasons.api_key_refused = USERS_ONLY;
    if (route.auth === 'api_key') reasons.user_refused = apiKeyRequired(route.scope);
    if (route.auth !== 'user' && route.path.includes('{workspace_id}'))
      reasons.other_workspace = API_KEY_WRONG_WORKSPACE;
    if (route.auth !== 'user' && route.scope) reasons.missing_scope = apiKeyLacksScope(route.scope);
    // Roles decide within a workspace or an organisation: the refusal names who may.
    if (route.path.includes('{workspace_id}')) {
      reasons.role = 'Only workspace admins and members can …';
      if (WRITES.has(route.method) && route.auth !== 'api_key') reasons.viewer = VIEWER_READ_ONLY_MESSAGE;
    } else if (route.path.includes('{organisation_id}'))
      reasons.role = 'Only organisation owners and admins can …';
    responses['403'] = errorResponse(
      'The credential may not do this; the message says why: the wrong kind of credential for the route, ' +
        "an API key of another workspace or without the route's scope, or a role that does not allow it " +
        '(`Only … can …`; a viewer attempting a write: `Viewers have read-only access`).',
      reasons,
    );
  }
  if (hasPathIds || declared['404'])
    responses['404'] = errorResponse(
      declared['404']?.when ??
        'An id in the path is unknown, of the wrong shape, or of another tenant (you cannot tell which).',
      { not_found: notFoundMessage(route.path) },
    );
  const idempotent = WRITES.has(route.method) && route.auth !== 'none';
  for (const [code, error] of Object.entries(declared)) {
    if (code === '404') continue;
    const conflictOfKey = code === '409' && idempotent;
    const when = conflictOfKey
      ? `${error.when}; or the Idempotency-Key was used with another request, or is still being served.`
      : error.when;
    const response = errorResponse(when, { [`status_${code}`]: error.when });
    if (error.body) {
      const schema = jsonSchema(error.body, 'output');
      const example = exampleFor(error.body, schema, {});
      (response.content['application/json'] as Record<string, unknown>).schema = conflictOfKey
        ? { anyOf: [schema, jsonSchema(ErrorBody, 'output')] }
        : schema;
      if (example !== undefined)
        (response.content['application/json'] as Record<string, unknown>).examples = {
          [`status_${code}`]: { summary: error.when, value: example },
        };
    }
    if (code === '429')
      (response.headers as Record<string, unknown>)['retry-after'] = {
        description: 'Seconds to wait before trying again.',
        schema: { type: 'integer', minimum: 1 },
        example: 30,
      };
    responses[code] = response;
  }
  if (idempotent && !declared['409'])
    responses['409'] = errorResponse(
      'The Idempotency-Key was used with another request, or the first request with it is still being served.',
      { idempotency: 'Idempotency-Key reused with a different request' },
    );
  if (route.body || route.rawBody)
    responses['415'] = errorResponse('The body was sent as another media type than the route takes.', {
      unsupported: 'Unsupported media type',
    });
  responses['422'] = {
    description:
      'The body or query is invalid: every problem at once, `loc` says where and `type` what (an unknown ' +
      'field or query parameter is `extra_forbidden`; a body that is not JSON `json_invalid`).',
    headers: { 'x-request-id': REQUEST_ID },
    content: {
      'application/json': {
        schema: jsonSchema(ValidationErrorBody, 'output'),
        example: {
          detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: {} }],
        },
      },
    },
  };
  responses['500'] = errorResponse('A fault on our side; the cause is logged, never sent.', {
    internal: INTERNAL_ERROR_MESSAGE,
  });
  return { status, responses };
}

function operation(name: string, route: Route<unknown, unknown>, tag: string) {
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
    example: pathParameterExample(m[1], route.path),
  }));
  const query = route.query ? jsonSchema(route.query, 'input') : undefined;
  const requiredQuery = new Set((query?.required ?? []) as string[]);
  const queryParams = Object.entries((query?.properties ?? {}) as Record<string, JsonSchema>).map(
    ([name, schema]) => ({
      name,
      in: 'query',
      // A parameter with a default may be left out, whatever zod's output requires.
      required: requiredQuery.has(name) && !('default' in schema),
      schema,
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
    }),
  );
  const idempotent = WRITES.has(route.method) && route.auth !== 'none';
  const headerParams = idempotent
    ? [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            '1 to 255 printable ASCII characters: the same key with the same request within 24 h answers the ' +
            'first response again (`idempotent-replayed: true`); with another request, 409.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
          example: '3f2b9c1e-7d4a-4b8e-9f0a-1c2d3e4f5a6b',
        },
      ]
    : [];
  const context = { path: route.path };
  const responseSchema = route.response ? jsonSchema(route.response, 'output') : undefined;
  const responseExample =
    route.response && responseSchema ? exampleFor(route.response, responseSchema, context) : undefined;
  const success = {
    description: 'Success',
    headers: { 'x-request-id': REQUEST_ID },
    ...(route.response && responseSchema
      ? {
          content: {
            'application/json': {
              schema: responseSchema,
              ...(responseExample !== undefined ? { example: responseExample } : {}),
            },
          },
        }
      : route.contentType
        ? { content: { [route.contentType]: { schema: { type: 'string' } } } }
        : {}),
  };
  const { responses } = responsesOf(route, success);
  const bodySchema = route.body ? jsonSchema(route.body, 'input') : undefined;
  const bodyExample = route.body && bodySchema ? exampleFor(route.body, bodySchema, context) : undefined;
  const description = [route.description, `**Auth:** ${authText(route)}`].filter(Boolean).join('\n\n');
  return {
    tags: [tag],
    summary: route.summary,
    description,
    operationId: name,
    parameters: [...params, ...queryParams, ...headerParams],
    ...(route.body && bodySchema
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: bodySchema,
                ...(bodyExample !== undefined ? { example: bodyExample } : {}),
              },
              ...Object.fromEntries(
                (route.rawBody ?? []).map((type) => [type, { schema: { type: 'string' } }]),
              ),
            },
          },
        }
      : {}),
    security: securityOf(route),
    responses,
  };
}

/** What a reader meets first: credentials and scopes, lists, idempotency, errors, webhooks. */
function introduction(domains: Record<string, RouteTable>): string {
  const byScope = new Map<string, string[]>();
  for (const routes of Object.values(domains))
    for (const [name, route] of Object.entries(routes))
      if (route.scope) byScope.set(route.scope, [...(byScope.get(route.scope) ?? []), name]);
  const scopes = API_KEY_SCOPES.filter((scope) => byScope.has(scope)).map(
    (scope) => `| \`${scope}\` | ${(byScope.get(scope) ?? []).map((name) => `\`${name}\``).join(', ')} |`,
  );
  return [
    'The API of the voice-agent service: agents that place and answer phone calls, their numbers, calls,',
    'contacts, campaigns, SMS, knowledge bases, CRM integrations, workflows and billing. JSON in and out,',
    'fields in `snake_case`, times in ISO 8601 with offset (`2026-11-22T01:30:00.000Z`), ids opaque with a',
    'type prefix (`ws_…`, `ag_…`, `call_…`).',
    '',
    '## Authentication',
    '',
    'Send `Authorization: Bearer <credential>`. The credential is either',
    '',
    "- **a user's token** (`userToken`): a JWT access token of the identity provider, what the dashboard",
    '  sends. Its roles decide: organisation owner, admin or regular member; workspace admin, member or',
    '  viewer (viewers read only). Identity, organisation, API-key and workflow routes take only this.',
    '- **an API key** (`apiKey`): `vak_<key_id>_<secret>`, made in a workspace with a list of scopes and',
    '  shown once. It acts in its own workspace only (another workspace: 403) and only on the routes whose',
    '  scope it carries (else 403 `API key lacks required scope: <scope>`).',
    '',
    'Each operation says which it takes. A missing or bad credential is 401; a refusal is 403 and its',
    'message says why.',
    '',
    '## Scopes',
    '',
    '| Scope | Operations |',
    '| --- | --- |',
    ...scopes,
    '',
    '## Pagination',
    '',
    'Lists take `?limit=` (1–100, default 50, unless the operation says less) and `?cursor=`, and answer',
    '`{ "items": [...], "next_cursor": "…" }`; pass `next_cursor` back as `cursor` for the next page, until it',
    "is `null`. A cursor is opaque and belongs to its list (another list's is 422).",
    '',
    '## Idempotency',
    '',
    'Writes (POST, PUT, PATCH, DELETE) take an `Idempotency-Key` header. The same key with the same request',
    'within 24 hours answers the first response again, with `idempotent-replayed: true`; with another',
    "request, or while the first is still being served, 409. A key is the caller's: the same key sent by two",
    'API keys or two users is two requests. Retry a write that timed out with the same key: it runs once.',
    '',
    '## Errors',
    '',
    'Errors are `{ "error": "<message>" }` (a few add a field, e.g. a duplicate contact\'s 409 carries',
    '`contact_id`), except 422, which lists every problem: `{ "detail": [{ "type", "loc", "msg", "input" }] }`.',
    'Every response carries `x-request-id`; quote it when asking for help. An id of another tenant is 404,',
    'exactly like an unknown one. Each operation lists the statuses it can answer: 401, 403, 404, 402',
    '(plan or credits), 409 (conflict), 413 (too large), 422, 429 (too many; wait `Retry-After` seconds),',
    '500.',
    '',
    '## Bodies and text',
    '',
    'Bodies and responses are JSON, fields in snake_case; unknown fields are refused (422 `extra_forbidden`).',
    'A body sent as another media type than the operation takes is 415; a body without `Content-Type` is read',
    'as JSON. Names and labels are one line with no control character (U+0000–U+001F, U+007F–U+009F) and no',
    'bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069); free text (notes, message',
    'bodies, prompts, descriptions) may have tab and line breaks and no other control character: anything else',
    'is 422 `value_error`. Any other Unicode is taken (accents, emoji, right-to-left scripts). E-mail addresses',
    'are kept in lower case; an internationalised domain is sent to as its Punycode; a non-ASCII part before',
    'the `@` is 422 (the e-mail provider, Amazon SES, does not support SMTPUTF8).',
    '',
    '## Webhooks',
    '',
    "Workspace events (`call.ended`, `contact.created`, `sms.received`, …) are POSTed to the workspace's",
    "webhook endpoints, and an agent's post-call webhook action sends each ended call. Every delivery is",
    "signed per Standard Webhooks with the workspace's signing secret (`webhook-id`, `webhook-timestamp`,",
    '`webhook-signature` headers), retried with backoff for more than 24 hours under the same `webhook-id`,',
    'and can be listed and resent through the Webhooks operations.',
  ].join('\n');
}

/** A tag per family of operations, named for people; `domains` keys map to it (several may share one). */
export interface ApiTag {
  name: string;
  description: string;
}

/** OpenAPI 3.1 document of every declared HTTP route, from the routes' own zod schemas. */
export function buildOpenApiDocument(
  domains: Record<string, RouteTable>,
  tags: Partial<Record<string, ApiTag>> = {},
) {
  const paths: Record<string, Record<string, unknown>> = {};
  const tagList: ApiTag[] = [];
  for (const [domain, routes] of Object.entries(domains)) {
    const tag = tags[domain] ?? { name: domain, description: '' };
    if (!tagList.some((t) => t.name === tag.name)) tagList.push(tag);
    for (const [name, route] of Object.entries(routes)) {
      paths[route.path] ??= {};
      paths[route.path][route.method.toLowerCase()] = operation(name, route, tag.name);
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Voice Agent Service API', version: '0.1', description: introduction(domains) },
    servers: [{ url: '/' }],
    tags: tagList.map((tag) => (tag.description ? tag : { name: tag.name })),
    components: {
      securitySchemes: {
        userToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: "A dashboard user's access token from the identity provider.",
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'vak_<key_id>_<secret>',
          description:
            "A workspace's API key. The operation's security requirement names the scope it must carry.",
        },
      },
      headers: {
        RequestId: {
          description: 'The id of this request in our logs.',
          schema: { type: 'string' },
          example: '5f0c2a3e-8b1d-4f6a-9c7e-2d4b6a8c0e1f',
        },
      },
    },
    paths,
  };
}
