import { domainToASCII } from 'node:url';
import * as z from 'zod';
import type { ZodType } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';
import { boundedInput, withoutWriteOnly } from './bounded-input.js';

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
  /** A record key's own problems (`invalid_key`): reported on the key's path. */
  issues?: ZodIssueLike[];
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
    case 'invalid_key':
      if (issue.issues && issue.issues.length > 0) {
        return issue.issues.flatMap((inner) =>
          toIssues({ ...inner, path: issue.path, input: inner.input ?? issue.input }, location, root),
        );
      }
      return [{ type: 'value_error', loc, msg: `Value error, ${issue.message}`, input }];
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
    .map((issue) => ({ ...issue, input: boundedInput(withoutWriteOnly(issue.input, issue.loc)) }));
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

// ── Text rules: one place for every domain's schemas ───────────────────────────────────────────────
//
// Two kinds of text, each refused with a 422 `value_error` on its field (docs/api.md "Text"):
// - a label (a name, a tag, a title, an e-mail subject: one line a list or a header shows) has no
//   control character at all — C0 (U+0000–U+001F, so tab and newline too), DEL and C1 (U+007F–U+009F)
//   — and no bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), which can
//   make a name read as something else ("Trojan Source") where it is shown beside other text;
// - free text (a note, a message body, a prompt, a description) may have tab, line feed and carriage
//   return, and bidirectional controls (right-to-left writing uses them); no other control character
//   (NUL included);
// - a parameter value (a call's `parameters`, filled into the agent's greeting and prompt: start-call,
//   a campaign's rows) is free text without bidirectional controls.
// No text of any kind has a lone surrogate (half of a UTF-16 pair, `"\ud800"` in JSON): it is not a
// character, and it cannot be stored or sent as UTF-8.

// Control characters are what these find.
// eslint-disable-next-line no-control-regex
const LABEL_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const FREE_TEXT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type TextKind = 'label' | 'free' | 'parameter';

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `value` is not acceptable text of this kind, or undefined when it is. */
export function textProblem(value: string, kind: TextKind): string | undefined {
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) return `must be valid Unicode text (found a lone surrogate ${codePoint(surrogate[0])})`;
  const control = (kind === 'label' ? LABEL_CONTROL : FREE_TEXT_CONTROL).exec(value);
  if (control) {
    return kind === 'label'
      ? `must be one line without control characters (found ${codePoint(control[0])})`
      : `must not contain control characters other than tab and line breaks (found ${codePoint(control[0])})`;
  }
  const bidi = kind === 'free' ? null : BIDI_CONTROL.exec(value);
  if (bidi) return `must not contain bidirectional control characters (found ${codePoint(bidi[0])})`;
  return undefined;
}

const refuse = (kind: TextKind) => (value: string, ctx: z.RefinementCtx) => {
  const problem = textProblem(value, kind);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
};

/** A name or label, trimmed: chain `.min()` / `.max()` as for any string. */
export const labelText = () => z.string().trim().superRefine(refuse('label'));

/** Free text (tab and line breaks allowed), not trimmed: chain `.trim()`, `.min()`, `.max()` as needed. */
export const freeText = () => z.string().superRefine(refuse('free'));

/** A parameter's name: a label, not trimmed (`{{name}}` matches it as given). */
export const parameterName = () => z.string().superRefine(refuse('label'));

/** A parameter's value (free text, no bidirectional controls), not trimmed: chain `.max()`. */
export const parameterText = () => z.string().superRefine(refuse('parameter'));

/** Texts looked at in one JSON value at most (its size is bounded by the schema's own limits). */
const MAX_JSON_TEXTS = 10_000;

/**
 * Where in a JSON value (an object's keys and every string, at any depth) the first texts that break
 * the rules of `kind` are, each with why. Walked without recursion.
 */
export function jsonTextProblems(
  value: unknown,
  kind: TextKind,
): { path: (string | number)[]; problem: string; key: boolean }[] {
  const found: { path: (string | number)[]; problem: string; key: boolean }[] = [];
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  let looked = 0;
  while (stack.length > 0 && found.length < 5 && looked < MAX_JSON_TEXTS) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      looked += 1;
      const problem = textProblem(current, kind);
      if (problem) found.push({ path, problem, key: false });
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push([item, [...path, index]]));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current as Record<string, unknown>)) {
        looked += 1;
        const problem = textProblem(key, kind);
        if (problem) found.push({ path: [...path, key], problem: `a key ${problem}`, key: true });
        stack.push([item, [...path, key]]);
      }
    }
  }
  return found;
}

/**
 * A JSON object given as is (a tool's `static_arguments`, a test's `arguments`): its keys and every
 * string in it follow the rules of a parameter's value (no control character but tab and line
 * breaks, no bidirectional control, no lone surrogate), reported at the text's own path.
 */
export const jsonObjectWithText = () =>
  z.record(z.string(), z.unknown()).superRefine((object, ctx) => {
    for (const { path, problem, key } of jsonTextProblems(object, 'parameter')) {
      const value = key
        ? path.at(-1)
        : path.reduce<unknown>((at, segment) => (at as Record<string, unknown>)[segment], object);
      ctx.addIssue({ code: 'custom', path, message: problem, input: value });
    }
  });

// ── E-mail addresses ────────────────────────────────────────────────────────────────────────────────

/**
 * Why an address cannot be sent to, or its form as stored and sent (lower case, the domain in
 * ASCII). Our e-mail provider (Amazon SES) takes 7-bit ASCII addresses only: it does not support
 * SMTPUTF8 (RFC 6531), so an internationalised domain (`zoe@exämple.com`) is sent to as its Punycode
 * (`zoe@xn--exmple-cua.com`, the same mailbox), and a non-ASCII local part (`zoë@…`) cannot be sent
 * to at all: refused with that reason, not taken and then never delivered.
 */
export function asciiEmail(value: string): { ok: true; email: string } | { ok: false; reason: string } {
  const trimmed = value.trim().toLowerCase();
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1)
    return { ok: false, reason: 'value is not a valid email address' };
  const local = trimmed.slice(0, at);
  const domain = trimmed.slice(at + 1);
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(local)) {
    return {
      ok: false,
      reason:
        'the part before @ must be ASCII: our e-mail provider cannot send to internationalised (SMTPUTF8) addresses',
    };
  }
  // eslint-disable-next-line no-control-regex
  const asciiDomain = /[^\x00-\x7f]/.test(domain) ? domainToASCII(domain) : domain;
  if (!asciiDomain) return { ok: false, reason: 'value is not a valid email address' };
  return { ok: true, email: `${local}@${asciiDomain}` };
}

/**
 * An email address in a request: trimmed, kept in lower case with an internationalised domain in
 * its ASCII (Punycode) form, at most 254 characters; a non-ASCII local part is 422 (see asciiEmail).
 */
export const emailAddress = () =>
  z
    .string()
    .trim()
    .max(254)
    .transform((value, ctx) => {
      const checked = asciiEmail(value);
      if (checked.ok) return checked.email;
      ctx.addIssue({ code: 'custom', message: checked.reason, input: value });
      return z.NEVER;
    })
    .pipe(
      z
        .string()
        .max(254)
        .pipe(z.email({ message: 'value is not a valid email address' })),
    );
