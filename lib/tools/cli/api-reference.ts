/**
 * `npm run docs:api`: writes docs/api.md, the API reference, from the route declarations
 * (functions/<domain>/routes.ts, listed in functions/api-routes.ts) through the OpenAPI builder, the
 * same source as `GET /api/v1/openapi.json`. `npm run docs:api -- --check` only says whether the file
 * is up to date (exit 1 when not); test/unit/api-reference.test.ts does the same.
 */
import '../../local/node-version-warning.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { apiRoutes, apiTags } from '../../../functions/api-routes.js';
import { authText, buildOpenApiDocument, type ApiTag } from '../../../functions/platform/openapi.js';
import type { Route, RouteTable } from '../../../functions/platform/http/route.js';
import { catalog } from '../../cloud/catalog.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');

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

/** A union's variants that are objects (a nullable object is one object, not a union). */
const objectVariants = (schema: Schema): Schema[] => {
  const union = asSchemas(schema.anyOf ?? schema.oneOf).filter((v) => !isNull(v));
  return union.length > 1 && union.every(isObject) ? union : [];
};

/** The property every variant fixes to a constant (`type`), if there is one. */
function discriminatorOf(objects: Schema[]): string | undefined {
  const first = Object.keys(asSchema(objects[0].properties));
  return first.find((name) =>
    objects.every((object) => 'const' in asSchema(asSchema(object.properties)[name])),
  );
}

/** A union of object shapes, rendered as one table per variant. */
interface Variants {
  /** Where the union is (`trigger`, `stages.task.action`), or '' for the whole body. */
  path: string;
  cases: { label: string; fields: Field[] }[];
}

function variantsOf(objects: Schema[], path: string, out: Variants[]): void {
  const discriminator = discriminatorOf(objects);
  const group: Variants = { path, cases: [] };
  out.push(group);
  for (const [index, object] of objects.entries()) {
    const label = discriminator
      ? `${code(discriminator)} is ${literal(asSchema(asSchema(object.properties)[discriminator]).const)}`
      : typeof object.title === 'string'
        ? object.title
        : `variant ${index + 1}`;
    group.cases.push({ label, fields: fieldsOf(object, path ? `${path}.` : '', out) });
  }
}

/**
 * Every field of an object schema, nested ones as `parent.child` and `list[].child`. A field that is
 * a union of object shapes (a discriminated union) is listed once, as "one of", and its variants go
 * to `unions`, each with only its own fields.
 */
function fieldsOf(schema: Schema, prefix = '', unions: Variants[] = []): Field[] {
  const fields: Field[] = [];
  for (const object of variants(schema).filter(isObject)) {
    const required = new Set(Array.isArray(object.required) ? (object.required as string[]) : []);
    for (const [name, value] of Object.entries(asSchema(object.properties))) {
      const property = asSchema(value);
      const path = `${prefix}${name}`;
      if (fields.some((f) => f.name === path)) continue;
      const shapes = objectVariants(property);
      const itemShapes = objectVariants(asSchema(property.items));
      const nullable = variants(property).some(isNull) ? ' | null' : '';
      fields.push({
        name: path,
        type:
          shapes.length > 0
            ? `one of ${shapes.length} shapes (below)${nullable}`
            : itemShapes.length > 0
              ? `array of one of ${itemShapes.length} shapes (below)`
              : typeOf(property),
        required: required.has(name),
        notes: notesOf(property),
      });
      if (shapes.length > 0) {
        variantsOf(shapes, path, unions);
        continue;
      }
      if (itemShapes.length > 0) {
        variantsOf(itemShapes, `${path}[]`, unions);
        continue;
      }
      for (const variant of variants(property).filter((v) => !isNull(v))) {
        if (isObject(variant)) fields.push(...fieldsOf(variant, `${path}.`, unions));
        const items = asSchema(variant.items);
        if (variant.type === 'array' && variants(items).some(isObject))
          fields.push(...fieldsOf(items, `${path}[].`, unions));
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

/** A schema's fields as tables: the common ones, then each union's variants with their own fields. */
function schemaTables(schema: Schema, withRequired: boolean): string[] {
  const unions: Variants[] = [];
  const top = objectVariants(schema);
  const fields = top.length > 0 ? [] : fieldsOf(schema, '', unions);
  if (top.length > 0) variantsOf(top, '', unions);
  if (fields.length === 0 && unions.length === 0) return [`Type: ${cell(typeOf(schema))}`, ''];
  const lines = fields.length > 0 ? [...fieldTable(fields, withRequired), ''] : [];
  for (const union of unions) {
    lines.push(union.path ? `${code(union.path)} is one of these shapes:` : 'One of these shapes:', '');
    for (const variant of union.cases) {
      lines.push(`- ${union.path ? `${code(union.path)}: ` : ''}${variant.label}`, '');
      if (variant.fields.length > 0) lines.push(...fieldTable(variant.fields, withRequired), '');
    }
  }
  return lines;
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

const STATUS_NAMES: Record<string, string> = {
  '400': 'Bad request',
  '401': 'Unauthorized',
  '402': 'Payment required',
  '403': 'Forbidden',
  '404': 'Not found',
  '409': 'Conflict',
  '413': 'Too large',
  '415': 'Unsupported media type',
  '422': 'Validation error',
  '429': 'Too many requests',
  '500': 'Internal error',
  '503': 'Unavailable',
};

/** The error responses the document gives routes, once each: status, how many routes, body. */
function errorSection(operations: Operation[]): string[] {
  const seen = new Map<string, { schema?: Schema; routes: number }>();
  for (const operation of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (!/^[45]\d\d$/.test(status)) continue;
      const known = seen.get(status);
      if (known) known.routes += 1;
      else seen.set(status, { schema: response.content?.['application/json']?.schema, routes: 1 });
    }
  }
  const lines = [
    '## Error statuses',
    '',
    'Every operation below lists the statuses it answers, and when. Across the API:',
    '',
    '| Status | Meaning | Returned by | Body |',
    '| --- | --- | --- | --- |',
  ];
  for (const [status, { schema, routes }] of [...seen].sort(([a], [b]) => a.localeCompare(b))) {
    const by = routes === operations.length ? 'every route' : `${routes} route${routes === 1 ? '' : 's'}`;
    const body = schema ? code(JSON.stringify(example(schema))) : '';
    lines.push(`| ${status} | ${STATUS_NAMES[status] ?? ''} | ${by} | ${cell(body)} |`);
  }
  lines.push(
    '',
    'Validation errors (422) list every problem at once: `loc` is where (`["body", "name"]`,',
    '`["query", "limit"]`), `type` what (`missing`, `extra_forbidden`, `json_invalid`, …).',
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

/** An operation's error statuses; those a route declares itself with when (`402 (…)`). */
function errorList(operation: Operation): string {
  return Object.entries(operation.responses)
    .filter(([status]) => /^[45]\d\d$/.test(status))
    .map(([status, response]) =>
      ['402', '409', '413', '429', '503'].includes(status)
        ? `${code(status)} (${response.description.replace(/\.$/, '')})`
        : code(status),
    )
    .join(', ');
}

/** docs/api.md as markdown (before prettier). */
export function renderApiReferenceMarkdown(
  domains: Record<string, RouteTable> = apiRoutes,
  tags: Partial<Record<string, ApiTag>> = apiTags,
): string {
  const document = buildOpenApiDocument(domains, tags);
  const operationOf = (route: Route<unknown, unknown>) =>
    document.paths[route.path][route.method.toLowerCase()] as unknown as Operation;
  const all = Object.values(domains).flatMap((routes) => Object.values(routes).map(operationOf));

  function routeSection(name: string, route: Route<unknown, unknown>): string[] {
    const operation = operationOf(route);
    const status = Object.keys(operation.responses).find((s) => /^[23]\d\d$/.test(s)) ?? '200';
    const success = operation.responses[status];
    const successType = Object.keys(success.content ?? {})[0];
    const out: string[] = [
      `#### ${code(`${route.method} ${route.path}`)}`,
      '',
      `**${cell(route.summary)}.**`,
    ];
    if (route.description) out.push(cell(route.description));
    out.push(
      '',
      `- Operation: ${code(name)}`,
      `- Auth: ${authText(route)}`,
      `- Success: ${code(status)} ${successType ?? (status === '204' ? '(no body)' : status.startsWith('3') ? '(redirect: `location` header)' : '(body not described)')}`,
      `- Errors: ${errorList(operation)}`,
    );
    if (WRITES.has(route.method) && route.auth !== 'none')
      out.push(
        `- Idempotency-Key: ${route.idempotency === 'route' ? 'accepted (kept by the route itself)' : 'accepted'}`,
      );
    const pathParams = operation.parameters.filter((p) => p.in === 'path').map((p) => code(p.name));
    if (pathParams.length > 0) out.push(`- Path parameters: ${pathParams.join(', ')}`);
    out.push('');
    const query = operation.parameters
      .filter((p) => p.in === 'query')
      .map((p) => ({ name: p.name, type: typeOf(p.schema), required: p.required, notes: notesOf(p.schema) }));
    if (query.length > 0) out.push('Query:', '', ...fieldTable(query, true), '');
    const body = operation.requestBody?.content['application/json']?.schema;
    if (body) out.push('Body:', '', ...schemaTables(body, true));
    const response = success.content?.['application/json']?.schema;
    if (response) out.push(`Response ${code(status)}:`, '', ...schemaTables(response, false));
    return out;
  }

  const lines: string[] = [
    '# API reference',
    '',
    '<!-- Generated by `npm run docs:api` from the route declarations; do not edit by hand. -->',
    '',
    `${document.info.title} ${document.info.version}. Generated from the route declarations`,
    '(`functions/<domain>/routes.ts`, listed in `functions/api-routes.ts`) and their zod schemas, the same',
    'source as the OpenAPI 3.1 document at `GET /api/v1/openapi.json`; `GET /api/v1/docs` shows that',
    'document interactively, with request and response examples. Regenerate with `npm run docs:api`; a',
    'unit test fails when this file is out of date.',
    '',
    document.info.description,
    '',
    ...errorSection(all),
    '## Routes',
    '',
  ];

  const byTag = new Map<string, RouteTable[]>();
  for (const [domain, routes] of Object.entries(domains)) {
    const tag = tags[domain]?.name ?? domain;
    byTag.set(tag, [...(byTag.get(tag) ?? []), routes]);
  }
  const toc: string[] = [];
  const sections: string[] = [];
  for (const [tag, tables] of byTag) {
    const count = tables.reduce((n, routes) => n + Object.keys(routes).length, 0);
    toc.push(`- [${tag}](#${anchor(tag)}) (${count})`);
    sections.push(`### ${tag}`, '');
    const description = Object.values(tags).find((t) => t?.name === tag)?.description;
    if (description) sections.push(description, '');
    for (const routes of tables) {
      const source = declaredIn(routes);
      if (source)
        sections.push(`Declared in \`${source.file}\`; served by the function \`${source.functionId}\`.`, '');
      for (const [name, route] of Object.entries(routes)) sections.push(...routeSection(name, route));
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
