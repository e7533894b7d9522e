import { textOf, type ChatCompletionRequest } from './protocol.js';

/**
 * The model simulator's structured output (a request with `response_format: {type: "json_schema"}`):
 * a deterministic value valid for the schema. A string property whose name suggests text from the
 * conversation (summary, notes, reason, text, answer, …) gets the caller's lines; other strings their
 * enum's first value, a `const`, or "" (padded to `minLength`); booleans false; numbers 0 (or their
 * `minimum`); arrays `minItems` items; null where the schema allows it; `$ref`s into `$defs` /
 * `definitions` are followed. Post-call analysis and evaluation judging may replace this module with
 * rules of their own: keep its one export's shape.
 */
export type AnswerStructured = (request: ChatCompletionRequest) => unknown;

type Schema = Record<string, unknown>;

const FROM_CONVERSATION =
  /(summary|notes?|description|reason|text|content|message|answer|quote|transcript|comment|explanation|feedback|rationale)/i;

export const answerStructured: AnswerStructured = (request) => {
  const format = request.response_format;
  const schema = format?.type === 'json_schema' ? (format.json_schema.schema ?? {}) : {};
  const said = request.messages
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content).trim())
    .filter(Boolean)
    .join(' ');
  return valueFor(schema, '', { root: schema, said, depth: 0 });
};

interface Walk {
  root: Schema;
  said: string;
  depth: number;
}

function resolve(schema: Schema, walk: Walk): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = walk.root;
  for (const part of ref.slice(2).split('/')) target = (target as Schema | undefined)?.[part];
  return typeof target === 'object' && target !== null ? (target as Schema) : {};
}

function valueFor(input: Schema, name: string, walk: Walk): unknown {
  if (walk.depth > 20) return null;
  const schema = resolve(input, walk);
  const next = { ...walk, depth: walk.depth + 1 };
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const options = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    const nullable = options.some((o) => resolve(o, walk).type === 'null');
    const real = options.find((o) => resolve(o, walk).type !== 'null');
    if (nullable && !(real && wantsConversation(resolve(real, walk), name))) return null;
    return valueFor(real ?? options[0], name, next);
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const type = types.find((t) => t !== 'null');
  if (types.includes('null') && !wantsConversation({ ...schema, type }, name)) return null;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(
        Object.entries(properties).map(([key, sub]) => [key, valueFor(sub, key, next)]),
      );
    }
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: count }, () => valueFor((schema.items ?? {}) as Schema, name, next));
    }
    case 'string':
      return stringFor(schema, name, walk);
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function wantsConversation(schema: Schema, name: string): boolean {
  return schema.type === 'string' && FROM_CONVERSATION.test(name);
}

function stringFor(schema: Schema, name: string, walk: Walk): string {
  if (schema.format === 'date-time') return '1970-01-01T00:00:00.000Z';
  if (schema.format === 'date') return '1970-01-01';
  let text = FROM_CONVERSATION.test(name) ? walk.said : '';
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  if (max !== undefined) text = text.slice(0, max);
  if (text.length < min) text = text.padEnd(min, '-');
  return text;
}
