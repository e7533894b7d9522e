import * as z from 'zod';
import type { ZodType } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';
import { boundedInput } from './bounded-input.js';

type Location = 'body' | 'query' | 'path';

interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  input?: unknown;
  expected?: string;
  keys?: string[];
  values?: unknown[];
  minimum?: number | bigint;
  maximum?: number | bigint;
  origin?: string;
  format?: string;
  params?: Record<string, unknown>;
}

/** Messages and types in the style of pydantic v2, which the documented 422 body follows. */
const TYPE_ERRORS: Record<string, { type: string; msg: string }> = {
  string: { type: 'string_type', msg: 'Input should be a valid string' },
  boolean: { type: 'bool_type', msg: 'Input should be a valid boolean' },
  number: { type: 'float_type', msg: 'Input should be a valid number' },
  int: { type: 'int_type', msg: 'Input should be a valid integer' },
  object: { type: 'dict_type', msg: 'Input should be a valid dictionary' },
  record: { type: 'dict_type', msg: 'Input should be a valid dictionary' },
  array: { type: 'list_type', msg: 'Input should be a valid list' },
};

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let value: unknown = root;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

const segments = (path: PropertyKey[]): (string | number)[] =>
  path.map((p) => (typeof p === 'number' ? p : String(p)));

function toIssues(issue: ZodIssueLike, location: Location, root: unknown): ValidationIssue[] {
  const path = segments(issue.path);
  const loc = [location, ...path];
  // A query value is a string before coercion (`?limit=abc` echoes "abc", not the NaN it became).
  const raw = valueAt(root, issue.path);
  const input =
    location === 'query' && raw !== undefined ? raw : issue.input !== undefined ? issue.input : raw;

  switch (issue.code) {
    case 'unrecognized_keys': {
      const parent = valueAt(root, issue.path) as Record<string, unknown> | undefined;
      return (issue.keys ?? []).map((key) => ({
        type: 'extra_forbidden',
        loc: [...loc, key],
        msg: 'Extra inputs are not permitted',
        input: parent?.[key],
      }));
    }
    case 'invalid_type': {
      if (input === undefined) {
        // pydantic reports the enclosing object as the input of a missing field.
        return [
          {
            type: 'missing',
            loc,
            msg: 'Field required',
            input: valueAt(root, issue.path.slice(0, -1)) ?? null,
          },
        ];
      }
      if (path.length === 0 && issue.expected === 'object') {
        return [
          {
            type: 'model_attributes_type',
            loc,
            msg: 'Input should be a valid dictionary or object to extract fields from',
            input,
          },
        ];
      }
      const known = TYPE_ERRORS[issue.expected ?? ''];
      return [
        { type: known?.type ?? `${issue.expected}_type`, loc, msg: known?.msg ?? issue.message, input },
      ];
    }
    case 'invalid_value':
    case 'invalid_enum_value': {
      if (input === undefined && path.length > 0) {
        // An absent field of an enum/literal type is missing, as pydantic reports it.
        return [
          {
            type: 'missing',
            loc,
            msg: 'Field required',
            input: valueAt(root, issue.path.slice(0, -1)) ?? null,
          },
        ];
      }
      const values = (issue.values ?? []).map((v) => `'${String(v)}'`);
      const msg =
        values.length > 1
          ? `Input should be ${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`
          : `Input should be ${values[0] ?? 'a permitted value'}`;
      return [{ type: values.length > 1 ? 'enum' : 'literal_error', loc, msg, input }];
    }
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = small ? issue.minimum : issue.maximum;
      if (issue.origin === 'string') {
        return [
          {
            type: small ? 'string_too_short' : 'string_too_long',
            loc,
            msg: `String should have ${small ? 'at least' : 'at most'} ${bound} character${bound === 1 ? '' : 's'}`,
            input,
          },
        ];
      }
      if (issue.origin === 'array' || issue.origin === 'set') {
        return [
          {
            type: small ? 'too_short' : 'too_long',
            loc,
            msg: `List should have ${small ? 'at least' : 'at most'} ${bound} item${bound === 1 ? '' : 's'}`,
            input,
          },
        ];
      }
      return [
        {
          type: small ? 'greater_than_equal' : 'less_than_equal',
          loc,
          msg: `Input should be ${small ? 'greater than or equal to' : 'less than or equal to'} ${bound}`,
          input,
        },
      ];
    }
    case 'invalid_format':
    case 'custom':
    default:
      return [{ type: 'value_error', loc, msg: `Value error, ${issue.message}`, input }];
  }
}

/**
 * Parse `input` with `schema`; on failure throw a 422 whose `detail` has one entry per problem,
 * each with `loc` starting at `location`.
 */
export function parseOrThrow<T>(schema: ZodType<T>, input: unknown, location: Location): T {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const detail = (result.error.issues as unknown as ZodIssueLike[])
    .flatMap((issue) => toIssues(issue, location, input))
    .map((issue) => ({ ...issue, input: boundedInput(issue.input) }));
  throw new ValidationError(detail);
}

/** Collect the failures of several locations into one 422, as pydantic does for a whole request. */
export function parseRequestParts<B, Q>(parts: {
  body?: { schema: ZodType<B>; value: unknown };
  query?: { schema: ZodType<Q>; value: unknown };
}): { body: B | undefined; query: Q | undefined } {
  const detail: ValidationIssue[] = [];
  let body: B | undefined;
  let query: Q | undefined;
  for (const [location, part] of [
    ['query', parts.query],
    ['body', parts.body],
  ] as const) {
    if (!part) continue;
    try {
      const parsed = parseOrThrow(part.schema as ZodType<unknown>, part.value, location);
      if (location === 'body') body = parsed as B;
      else query = parsed as Q;
    } catch (error) {
      if (error instanceof ValidationError) detail.push(...error.detail);
      else throw error;
    }
  }
  if (detail.length > 0) throw new ValidationError(detail);
  return { body, query };
}

/** An email address in a request: trimmed, at most 254 characters, kept in lower case. */
export const emailAddress = () =>
  z
    .string()
    .trim()
    .max(254)
    .pipe(z.email({ message: 'value is not a valid email address' }))
    .transform((value) => value.toLowerCase());
