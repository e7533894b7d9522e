import type { AnySchema, ErrorObject, ValidateFunction } from 'ajv';
import { ValidationError, type ValidationIssue } from '../platform/errors.js';
import { MAX_PARAMETERS_BYTES } from './tools-schema.js';

/**
 * JSON Schema checks of tools (ajv, imported here on first use: only a save of tools or a tool run
 * loads it). A function tool's `parameters` must be a valid schema against its meta-schema (JSON
 * Schema 2020-12 unless it names draft-07 in `$schema`) and compile (references resolve inside it:
 * nothing is fetched); the model's arguments are checked against it before a call.
 */

interface AjvLike {
  validateSchema(schema: AnySchema): boolean | Promise<unknown>;
  compile(schema: AnySchema): ValidateFunction;
  errors?: ErrorObject[] | null;
}

type Draft = '2020-12' | 'draft-07';
const instances = new Map<Draft, Promise<AjvLike>>();

function draftOf(schema: Record<string, unknown>): Draft | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return undefined;
  if (/json-schema\.org\/draft-07\/schema#?$/.test(declared)) return 'draft-07';
  if (/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  return undefined;
}

function ajvFor(draft: Draft): Promise<AjvLike> {
  let instance = instances.get(draft);
  if (!instance) {
    const options = { strict: false, validateFormats: false, allErrors: false };
    instance =
      draft === '2020-12'
        ? import('ajv/dist/2020.js').then((m) => new (classOf(m))(options))
        : import('ajv').then((m) => new (classOf(m))(options));
    instance.catch(() => instances.delete(draft));
    instances.set(draft, instance);
  }
  return instance;
}

/** The Ajv class of a CommonJS module imported from ESM (`default`, or `default.default`). */
function classOf(module: { default: unknown }): new (options: object) => AjvLike {
  type AjvClass = new (options: object) => AjvLike;
  const outer = module.default as AjvClass & { default?: AjvClass };
  return outer.default ?? outer;
}

const describe = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`.trim())
    .join('; ');

/** Why `schema` is not a usable JSON Schema, or undefined. */
export async function schemaProblem(schema: Record<string, unknown>): Promise<string | undefined> {
  const draft = draftOf(schema);
  if (!draft) return '$schema must be JSON Schema 2020-12 or draft-07 (or absent)';
  const ajv = await ajvFor(draft);
  if (!(await ajv.validateSchema(schema))) return `not a valid JSON Schema: ${describe(ajv.errors)}`;
  try {
    await validatorFor(schema);
  } catch (error) {
    return `not a valid JSON Schema: ${(error as Error).message.slice(0, 300)}`;
  }
  return undefined;
}

/**
 * Why `schema` cannot be a tool's parameters, by the rules of a function tool's `parameters` (the
 * object schema and size its zod schema checks, then schemaProblem): an MCP server's input schemas
 * are held to them too.
 */
export async function parametersProblem(schema: unknown): Promise<string | undefined> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    return 'must be a JSON Schema object';
  const record = schema as Record<string, unknown>;
  if (record.type !== 'object') return 'must be a JSON Schema of type "object"';
  if (Buffer.byteLength(JSON.stringify(record), 'utf8') > MAX_PARAMETERS_BYTES)
    return `must be at most ${MAX_PARAMETERS_BYTES / 1024} KB of JSON`;
  return schemaProblem(record);
}

// Compiled validators by schema text (a container runs the same few agents' tools over and over).
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 200;

async function validatorFor(schema: Record<string, unknown>): Promise<ValidateFunction> {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known;
  const ajv = await ajvFor(draftOf(schema) ?? '2020-12');
  // Compiled without `$id`, so the same schema twice is not a duplicate id in the instance.
  const { $id: _id, ...rest } = schema;
  const validate = ajv.compile(rest);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, validate);
  return validate;
}

/** Why `args` do not match the tool's `parameters`, or undefined. */
export async function argumentsProblem(
  parameters: Record<string, unknown>,
  args: Record<string, unknown>,
): Promise<string | undefined> {
  const validate = await validatorFor(parameters);
  return validate(args)
    ? undefined
    : `arguments do not match the tool's parameters: ${describe(validate.errors)}`;
}

/**
 * 422 at `tools[i].parameters` for every function tool whose parameters are not a valid schema
 * (`location`: where the list is in the request, `['body', 'tools']`).
 */
export async function assertToolSchemas(
  tools: readonly { type: string; parameters?: Record<string, unknown> }[],
  location: (string | number)[] = ['body', 'tools'],
): Promise<void> {
  const detail: ValidationIssue[] = [];
  for (const [index, tool] of tools.entries()) {
    if (tool.type !== 'function' || !tool.parameters) continue;
    const problem = await schemaProblem(tool.parameters);
    if (problem)
      detail.push({
        type: 'value_error',
        loc: [...location, index, 'parameters'],
        msg: `Value error, parameters is ${problem}`,
        input: '[schema]',
      });
  }
  if (detail.length > 0) throw new ValidationError(detail);
}
