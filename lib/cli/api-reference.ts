/**
 * `npm run docs:api`: writes docs/api.md, the API reference, from the route declarations
 * (functions/<domain>/routes.ts, listed in functions/api-routes.ts) through the OpenAPI builder, the
 * same source as `GET /api/v1/openapi.json`. `npm run docs:api -- --check` only says whether the file
 * is up to date (exit 1 when not); test/unit/api-reference.test.ts does the same.
 */
import '../local/node-version-warning.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { apiRoutes } from '../../functions/api-routes.js';
import { buildOpenApiDocument } from '../../functions/platform/openapi.js';
import type { Route, RouteTable } from '../../functions/platform/http/route.js';
import { catalog } from '../catalog.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/** Where the reference is written, relative to the repository root. */
export const API_REFERENCE_FILE = 'docs/api.md';

type Schema = Record<string, unknown>;

interface Operation {
  operationId: string;
  parameters: { name: string; in: 'path' | 'query'; required: boolean; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
}

interface Field {
  name: string;
  type: string;
  required: boolean;
  notes: string;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const asSchema = (value: unknown): Schema =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : {};
const asSchemas = (value: unknown): Schema[] => (Array.isArray(value) ? value.map(asSchema) : []);

/** Markdown table cells: no line breaks, pipes escaped. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
const code = (text: string) => `\`${text}\``;
const literal = (value: unknown) => code(JSON.stringify(value));

const isNull = (schema: Schema) => schema.type === 'null';
const isObject = (schema: Schema) => schema.type === 'object' || schema.properties !== undefined;

/** The variants of a union (`anyOf`/`oneOf`), else the schema itself. */
const variants = (schema: Schema): Schema[] => {
  const union = asSchemas(schema.anyOf ?? schema.oneOf);
  return union.length > 0 ? union : [schema];
};

/** A short type: `string (date-time)`, `integer`, `"a" \| "b"`, `array of object`, `X \| null`. */
function typeOf(schema: Schema): string {
  const union = asSchemas(schema.anyOf ?? schema.oneOf);
  if (union.length > 0) return [...new Set(union.map(typeOf))].join(' | ');
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  switch (schema.type) {
    case 'array':
      return `array of ${typeOf(asSchema(schema.items))}`;
    case 'object': {
      const values = asSchema(schema.additionalProperties);
      if (!schema.properties && Object.keys(values).length > 0) return `map of string to ${typeOf(values)}`;
      return 'object';
    }
    case 'string':
      return typeof schema.format === 'string' ? `string (${schema.format})` : 'string';
    case undefined:
      return 'any';
    default:
      return String(schema.type);
  }
}

const range = (min: unknown, max: unknown, unit = '') =>
  min !== undefined && max !== undefined
    ? `${min}–${max}${unit}`
    : min !== undefined
      ? `≥ ${min}${unit}`
      : `≤ ${max}${unit}`;

/** Constraints and defaults, from the schema and the non-null variant of a nullable one. */
function notesOf(schema: Schema): string {
  const notes: string[] = [];
  for (const s of [schema, ...variants(schema).filter((v) => v !== schema && !isNull(v))]) {
    if (typeof s.description === 'string') notes.push(s.description);
    if (s.minLength !== undefined || s.maxLength !== undefined)
      notes.push(`length ${range(s.minLength, s.maxLength)}`);
    if (s.minimum !== undefined || s.maximum !== undefined) notes.push(range(s.minimum, s.maximum));
    if (s.exclusiveMinimum !== undefined) notes.push(`> ${s.exclusiveMinimum}`);
    if (s.exclusiveMaximum !== undefined) notes.push(`< ${s.exclusiveMaximum}`);
    if (s.minItems !== undefined || s.maxItems !== undefined)
      notes.push(`${range(s.minItems, s.maxItems)} items`);
    if (s.minProperties !== undefined || s.maxProperties !== undefined)
      notes.push(`${range(s.minProperties, s.maxProperties)} entries`);
    if (typeof s.pattern === 'string') notes.push(`pattern ${code(s.pattern)}`);
    const names = asSchema(s.propertyNames);
    if (typeof names.pattern === 'string') notes.push(`keys match ${code(names.pattern)}`);
    if (names.maxLength !== undefined) notes.push(`keys up to ${names.maxLength} characters`);
  }
  if ('default' in schema) notes.push(`default ${literal(schema.default)}`);
  return [...new Set(notes)].join('; ');
}

/** Every field of an object schema, nested ones as `parent.child` and `list[].child`. */
function fieldsOf(schema: Schema, prefix = ''): Field[] {
  const fields: Field[] = [];
  const objects = variants(schema).filter(isObject);
  for (const object of objects) {
    const required = new Set(Array.isArray(object.required) ? (object.required as string[]) : []);
    for (const [name, value] of Object.entries(asSchema(object.properties))) {
      const property = asSchema(value);
      const path = `${prefix}${name}`;
      if (fields.some((f) => f.name === path)) continue;
      fields.push({
        name: path,
        type: typeOf(property),
        required: required.has(name),
        notes: notesOf(property),
      });
      const nonNull = variants(property).filter((v) => !isNull(v));
      for (const variant of nonNull) {
        if (isObject(variant)) fields.push(...fieldsOf(variant, `${path}.`));
        const items = asSchema(variant.items);
        if (variant.type === 'array' && variants(items).some(isObject))
          fields.push(...fieldsOf(items, `${path}[].`));
      }
    }
  }
  return fields.filter((f, i) => fields.findIndex((g) => g.name === f.name) === i);
}

function fieldTable(fields: Field[], withRequired: boolean): string[] {
  if (fields.length === 0) return [];
  const header = withRequired ? '| Field | Type | Required | Notes |' : '| Field | Type | Notes |';
  const rule = withRequired ? '| --- | --- | --- | --- |' : '| --- | --- | --- |';
  return [
    header,
    rule,
    ...fields.map((f) =>
      withRequired
        ? `| ${code(f.name)} | ${cell(f.type)} | ${f.required ? 'yes' : 'no'} | ${cell(f.notes)} |`
        : `| ${code(f.name)} | ${cell(f.type)} | ${cell(f.notes)} |`,
    ),
  ];
}

function authOf(route: Route<unknown, unknown>): string {
  switch (route.auth) {
    case 'none':
      return 'none (public)';
    case 'user':
      return "JWT (a dashboard user's access token); API keys are refused (403)";
    case 'api_key':
      return `an API key of the workspace${route.scope ? ` with scope ${code(route.scope)}` : ''}; a user's JWT is refused (403)`;
    case 'user_or_api_key':
      return route.scope
        ? `JWT, or an API key of the workspace with scope ${code(route.scope)}`
        : 'JWT, or an API key of the workspace';
  }
}

const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/** A JSON example of a schema's shape (for the error bodies). */
function example(schema: Schema): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = asSchemas(schema.anyOf ?? schema.oneOf);
  if (union.length > 0) return example(union[0]);
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(asSchema(schema.properties)).map(([name, value]) => [name, example(asSchema(value))]),
      );
    case 'array':
      return [example(asSchema(schema.items))];
    case 'string':
      return '…';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return true;
    default:
      return '…';
  }
}

/** The error responses the document gives routes, once each: status, when, body. */
function errorSection(operations: Operation[]): string[] {
  const seen = new Map<string, { description: string; schema?: Schema; routes: number }>();
  for (const operation of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (!/^[45]\d\d$/.test(status)) continue;
      const known = seen.get(status);
      if (known) known.routes += 1;
      else
        seen.set(status, {
          description: response.description,
          schema: response.content?.['application/json']?.schema,
          routes: 1,
        });
    }
  }
  const lines = [
    '## Errors',
    '',
    'Every error has a JSON body of one of two shapes, and every response carries `x-request-id`. An id',
    'of another tenant is 404, exactly like an unknown id.',
    '',
    '| Status | Meaning | Returned by | Body |',
    '| --- | --- | --- | --- |',
  ];
  for (const [status, { description, schema, routes }] of [...seen].sort(([a], [b]) => a.localeCompare(b))) {
    const by = routes === operations.length ? 'every route' : 'every authenticated route';
    const body = schema ? code(JSON.stringify(example(schema))) : '';
    lines.push(`| ${status} | ${cell(description)} | ${by} | ${cell(body)} |`);
  }
  lines.push(
    '',
    'Validation errors (422) list every problem at once: `loc` is where (`["body", "name"]`,',
    '`["query", "limit"]`), `type` what (`missing`, `extra_forbidden`, `json_invalid`, …). The other',
    'statuses some routes answer (400, 402 payment required, 409 conflict, 429 too many requests with',
    '`retry-after`, 503 unavailable) have the `{ "error": … }` shape too.',
    '',
  );
  return lines;
}

/** The folder a domain's routes are declared in: its function's entry (functions/<folder>/…). */
function declaredIn(routes: RouteTable): { file: string; functionId: string } | undefined {
  const first = Object.values(routes)[0];
  const spec = catalog.find((fn) => fn.http?.includes(first));
  if (!spec) return undefined;
  return { file: `functions/${spec.entry.split('/')[1]}/routes.ts`, functionId: spec.id };
}

/** docs/api.md as markdown (before prettier). */
export function renderApiReferenceMarkdown(domains: Record<string, RouteTable> = apiRoutes): string {
  const document = buildOpenApiDocument(domains);
  const operationOf = (route: Route<unknown, unknown>) =>
    document.paths[route.path][route.method.toLowerCase()] as unknown as Operation;
  const all = Object.values(domains).flatMap((routes) => Object.values(routes).map(operationOf));

  const lines: string[] = [
    '# API reference',
    '',
    '<!-- Generated by `npm run docs:api` from the route declarations; do not edit by hand. -->',
    '',
    `${document.info.title} ${document.info.version}. Generated from the route declarations`,
    '(`functions/<domain>/routes.ts`, listed in `functions/api-routes.ts`) and their zod schemas, the same',
    'source as the OpenAPI 3.1 document at `GET /api/v1/openapi.json`; `GET /api/v1/docs` shows that',
    'document interactively. Regenerate with `npm run docs:api`; a unit test fails when this file is out',
    'of date.',
    '',
    '## Conventions',
    '',
    '- Authentication: `Authorization: Bearer <credential>`, where the credential is a JWT access token of',
    '  the identity provider (a dashboard user) or an API key `vak_<key_id>_<secret>`. An API key belongs to',
    '  one workspace: it is refused (403) on routes of another workspace and on routes that need a scope',
    '  it does not carry. A missing or invalid credential is 401.',
    '- Bodies and responses are JSON, fields in snake_case. Unknown body or query fields are refused',
    '  (422 `extra_forbidden`).',
    '- Lists take `?limit=` (1–100, default 50) and `?cursor=` and answer `{ items, next_cursor }`.',
    '- Writes (POST, PUT, PATCH, DELETE) of authenticated routes accept an `Idempotency-Key` header: the same',
    '  key with the same request within 24 h answers the first response again (`idempotent-replayed: true`),',
    "  with another request 409. A key is the caller's: the same key sent by two API keys or two users of",
    '  one workspace is two requests.',
    '',
    ...errorSection(all),
    '## Routes',
    '',
  ];

  const toc: string[] = [];
  const sections: string[] = [];
  for (const [domain, routes] of Object.entries(domains)) {
    const source = declaredIn(routes);
    toc.push(`- [${domain}](#${anchor(domain)}) (${Object.keys(routes).length})`);
    sections.push(`### ${domain}`, '');
    if (source)
      sections.push(`Declared in \`${source.file}\`; served by the function \`${source.functionId}\`.`, '');
    for (const [name, route] of Object.entries(routes)) {
      const operation = operationOf(route);
      const status = Object.keys(operation.responses).find((s) => /^[23]\d\d$/.test(s)) ?? '200';
      const success = operation.responses[status];
      const successType = Object.keys(success.content ?? {})[0];
      sections.push(`#### ${code(`${route.method} ${route.path}`)}`, '', cell(route.summary), '');
      sections.push(
        `- Operation: ${code(name)}`,
        `- Auth: ${authOf(route)}`,
        `- Success: ${code(status)} ${successType ?? (status === '204' ? '(no body)' : status.startsWith('3') ? '(redirect: `location` header)' : '(body not described)')}`,
      );
      if (WRITES.has(route.method) && route.auth !== 'none')
        sections.push(
          `- Idempotency-Key: ${route.idempotency === 'route' ? 'accepted (kept by the route itself)' : 'accepted'}`,
        );
      const pathParams = operation.parameters.filter((p) => p.in === 'path').map((p) => code(p.name));
      if (pathParams.length > 0) sections.push(`- Path parameters: ${pathParams.join(', ')}`);
      sections.push('');
      const query = operation.parameters
        .filter((p) => p.in === 'query')
        .map((p) => ({ name: p.name, type: typeOf(p.schema), required: false, notes: notesOf(p.schema) }));
      if (query.length > 0) sections.push('Query:', '', ...fieldTable(query, true), '');
      const body = operation.requestBody?.content['application/json']?.schema;
      if (body) {
        const fields = fieldsOf(body);
        sections.push('Body:', '');
        if (fields.length > 0) sections.push(...fieldTable(fields, true), '');
        else sections.push(`Type: ${cell(typeOf(body))}`, '');
      }
      const response = success.content?.['application/json']?.schema;
      if (response) {
        const fields = fieldsOf(response);
        sections.push(`Response ${code(status)}:`, '');
        if (fields.length > 0) sections.push(...fieldTable(fields, false), '');
        else sections.push(`Type: ${cell(typeOf(response))}`, '');
      }
    }
  }
  return [...lines, ...toc, '', ...sections].join('\n');
}

/** docs/api.md exactly as committed: the markdown formatted by the repository's prettier settings. */
export async function renderApiReference(domains: Record<string, RouteTable> = apiRoutes): Promise<string> {
  const path = resolve(repoRoot, API_REFERENCE_FILE);
  const options = (await resolveConfig(path)) ?? {};
  return format(renderApiReferenceMarkdown(domains), { ...options, parser: 'markdown', filepath: path });
}

async function main(): Promise<number> {
  const path = resolve(repoRoot, API_REFERENCE_FILE);
  const rendered = await renderApiReference();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // absent: out of date
    }
    if (current === rendered) return 0;
    process.stderr.write(`${API_REFERENCE_FILE} is out of date: run npm run docs:api\n`);
    return 1;
  }
  writeFileSync(path, rendered);
  process.stderr.write(`wrote ${API_REFERENCE_FILE}\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
