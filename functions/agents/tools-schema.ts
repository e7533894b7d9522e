import * as z from 'zod';
import { schemaOnFirstUse } from '../platform/first-use.js';
import { freeText, jsonObjectWithText } from '../platform/validation.js';
import { endpointUrlProblem } from '../platform/outbound-http/url-guard.js';
import { BUILT_IN_TOOL_NAMES, isBuiltInToolName } from './built-in-tools.js';

/**
 * The agent's `tools` field (docs/api.md "Agent tools"): function tools (an HTTPS endpoint of the
 * customer's, called when the model asks) and MCP servers (each server's tools offered as
 * `{name}__{tool}`). Shapes and limits here; whether `parameters` is a valid JSON Schema is checked by
 * tools-validation.ts (ajv, loaded only when tools are saved or run).
 */

export const MAX_TOOLS = 20;
export const MAX_TOOLS_BYTES = 64 * 1024;
export const MAX_PARAMETERS_BYTES = 16 * 1024;
export const MAX_TOOL_HEADERS = 10;
export const MAX_HEADER_VALUE_LENGTH = 4096;
export const MAX_MCP_PREFIX_LENGTH = 20;
export const MIN_TOOL_TIMEOUT_MS = 500;
export const MAX_TOOL_TIMEOUT_MS = 30_000;
export const DEFAULT_TOOL_TIMEOUT_MS = 8_000;
/** Header names a tool may not set: the request's own, and the signature's. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type']);
/** What a stored header value reads back as: `••••` and its last 4 characters. */
export const MASK_PREFIX = '••••';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

const toolName = (max: number) =>
  z
    .string()
    .regex(
      new RegExp(`^[a-z][a-z0-9_]{0,${max - 1}}$`),
      `a lower-case name: a letter, then letters, digits or _ (at most ${max})`,
    )
    .refine((name) => !isBuiltInToolName(name), {
      message: `must not be a built-in tool's name (${BUILT_IN_TOOL_NAMES.join(', ')})`,
    });

const toolUrl = () =>
  z
    .string()
    .meta({ examples: ['https://api.example.com/tools/book-inspection'] })
    .superRefine((url, ctx) => {
      const problem = endpointUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: url });
    });

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function headerValueProblem(value: string): string | undefined {
  if (/[\r\n]/.test(value)) return 'a header value must not contain CR or LF';
  if (CONTROL.test(value) || /[^\t\u0020-\u00ff]/.test(value.replace(/^••••/, '')))
    return 'a header value must not contain control characters or characters outside Latin-1';
  if (value.length > MAX_HEADER_VALUE_LENGTH)
    return `a header value is at most ${MAX_HEADER_VALUE_LENGTH} characters`;
  return undefined;
}

/** Header names and write-only values (values are stored encrypted and read back masked). */
const headers = () =>
  z
    .record(z.string(), z.string())
    .superRefine((map, ctx) => {
      const names = Object.keys(map);
      if (names.length > MAX_TOOL_HEADERS)
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_TOOL_HEADERS} headers`, input: map });
      const seen = new Set<string>();
      for (const name of names) {
        const lower = name.toLowerCase();
        const problem = !/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(name)
          ? 'a header name is 1-100 token characters (letters, digits, - and the like)'
          : RESERVED_HEADERS.has(lower) || lower.startsWith('webhook-')
            ? `the ${lower} header is set by the service`
            : seen.has(lower)
              ? 'each header name may appear once (names are case-insensitive)'
              : undefined;
        seen.add(lower);
        if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem, input: name });
        const valueProblem = headerValueProblem(map[name]);
        if (valueProblem)
          ctx.addIssue({ code: 'custom', path: [name], message: valueProblem, input: '[hidden]' });
      }
    })
    .meta({ examples: [{ authorization: 'Bearer sk_live_abc123' }] });

const timeoutMs = () =>
  z.number().int().min(MIN_TOOL_TIMEOUT_MS).max(MAX_TOOL_TIMEOUT_MS).default(DEFAULT_TOOL_TIMEOUT_MS);

const parameters = () =>
  z
    .record(z.string(), z.unknown())
    .superRefine((schema, ctx) => {
      if (schema.type !== 'object')
        ctx.addIssue({
          code: 'custom',
          message: 'parameters must be a JSON Schema of type "object"',
          input: schema,
        });
      if (bytes(schema) > MAX_PARAMETERS_BYTES)
        ctx.addIssue({
          code: 'custom',
          message: `parameters must be at most ${MAX_PARAMETERS_BYTES / 1024} KB of JSON`,
          input: '[too large]',
        });
    })
    .meta({
      examples: [
        {
          type: 'object',
          properties: {
            date: { description: 'The day, YYYY-MM-DD', format: 'date' },
            attendees: { type: 'integer', minimum: 1 },
          },
          required: ['date'],
        },
      ],
    });

export const FunctionToolInput = schemaOnFirstUse(() =>
  z.strictObject({
    type: z.literal('function'),
    name: toolName(40).meta({ examples: ['book_inspection'] }),
    /** What the tool does and when to use it: the model reads it. */
    description: freeText().trim().min(1).max(1_000),
    /** A JSON Schema of `type: "object"`: the arguments the model gives. */
    parameters: parameters(),
    url: toolUrl(),
    headers: headers().optional(),
    /** Merged into the arguments sent (they win); never shown to the model. */
    static_arguments: jsonObjectWithText().optional(),
    timeout_ms: timeoutMs(),
    /** Said to the caller while the tool runs. */
    speak_during: freeText().max(300).optional(),
    /** Said to the caller when the tool fails. */
    speak_on_failure: freeText().max(300).optional(),
  }),
);
export type FunctionToolInput = z.infer<typeof FunctionToolInput>;

export const McpToolInput = schemaOnFirstUse(() =>
  z.strictObject({
    type: z.literal('mcp'),
    /** The prefix of the server's tools: `{name}__{tool}`. */
    name: toolName(MAX_MCP_PREFIX_LENGTH).meta({ examples: ['crm'] }),
    /** The server's Streamable HTTP endpoint. */
    url: toolUrl(),
    headers: headers().optional(),
    /** The server's tool names offered to the model; absent: all of them. */
    allowed_tools: z
      .array(z.string().min(1).max(64))
      .max(100)
      .refine((names) => new Set(names).size === names.length, { message: 'each tool may appear once' })
      .optional(),
    timeout_ms: timeoutMs(),
  }),
);
export type McpToolInput = z.infer<typeof McpToolInput>;

export const ToolInput = schemaOnFirstUse(() =>
  z.discriminatedUnion('type', [FunctionToolInput, McpToolInput]),
);
export type ToolInput = z.infer<typeof ToolInput>;

/** The `tools` field of a create or PATCH (PATCH replaces the list). */
export const ToolsInput = schemaOnFirstUse(() =>
  z
    .array(ToolInput)
    .max(MAX_TOOLS)
    .superRefine((tools, ctx) => {
      const names = new Set<string>();
      const prefixes = tools.filter((t) => t.type === 'mcp').map((t) => `${t.name}__`);
      tools.forEach((tool, index) => {
        if (names.has(tool.name))
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: 'each tool name may appear once in an agent',
            input: tool.name,
          });
        names.add(tool.name);
        if (tool.type === 'function' && prefixes.some((prefix) => tool.name.startsWith(prefix)))
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: "must not start with an MCP server's name and __",
            input: tool.name,
          });
      });
      if (bytes(tools) > MAX_TOOLS_BYTES)
        ctx.addIssue({
          code: 'custom',
          message: `tools must be at most ${MAX_TOOLS_BYTES / 1024} KB of JSON altogether`,
          input: '[too large]',
        });
    })
    .meta({
      examples: [
        [
          {
            type: 'function',
            name: 'book_inspection',
            description: 'Book a property inspection for the caller',
            parameters: {
              type: 'object',
              properties: {
                date: { description: 'The day, YYYY-MM-DD', format: 'date' },
                time: { description: 'The time, HH:MM', pattern: '^\\d{2}:\\d{2}$' },
              },
              required: ['date', 'time'],
            },
            url: 'https://api.example.com/tools/book-inspection',
            headers: { authorization: 'Bearer sk_live_abc123' },
            timeout_ms: 8000,
            speak_during: 'One moment while I book that.',
          },
        ],
      ],
    }),
);

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────

const maskedHeaders = () =>
  z
    .record(z.string(), z.string())
    .meta({ examples: [{ authorization: '••••c123' }] })
    .optional();

export const ToolResponse = schemaOnFirstUse(() =>
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('function'),
      name: z.string(),
      description: z.string(),
      parameters: z.record(z.string(), z.unknown()),
      url: z.string(),
      /** Values masked: `••••` and their last 4 characters (send the mask back to keep a value). */
      headers: maskedHeaders(),
      static_arguments: z.record(z.string(), z.unknown()).optional(),
      timeout_ms: z.number().int(),
      speak_during: z.string().optional(),
      speak_on_failure: z.string().optional(),
    }),
    z.object({
      type: z.literal('mcp'),
      name: z.string(),
      url: z.string(),
      headers: maskedHeaders(),
      allowed_tools: z.array(z.string()).optional(),
      timeout_ms: z.number().int(),
    }),
  ]),
);
export type ToolResponse = z.infer<typeof ToolResponse>;

export const isMask = (value: string): boolean => value.startsWith(MASK_PREFIX);
export const maskOf = (value: string): string => `${MASK_PREFIX}${value.slice(-4)}`;

// ── The tool routes ───────────────────────────────────────────────────────────────────────────────

export const TestToolBody = schemaOnFirstUse(() =>
  z.strictObject({
    /** What the model would pass (checked against the tool's parameters). */
    arguments: jsonObjectWithText()
      .default({})
      .meta({ examples: [{ date: '2025-07-01', time: '10:00' }] }),
  }),
);
export type TestToolBody = z.input<typeof TestToolBody>;

export const TestToolResponse = schemaOnFirstUse(() =>
  z.object({
    status: z.enum(['ok', 'error', 'timeout', 'cancelled']),
    /** The endpoint's status, when it answered (null for MCP tools and failures before an answer). */
    http_status: z.number().int().nullable(),
    duration_ms: z.number().int(),
    /** What the model would read: the answer (parsed when it is JSON), or `{ error }`. */
    result: z.unknown().meta({ examples: [{ confirmed: true, reference: 'INS-4821' }] }),
  }),
);

export const ListToolToolsResponse = schemaOnFirstUse(() =>
  z.object({
    tools: z.array(
      z.object({
        /** The server's own name for the tool (the model calls it `{name}__{tool}`). */
        name: z.string().meta({ examples: ['lookup_contact'] }),
        description: z.string(),
        input_schema: z.record(z.string(), z.unknown()),
        /** Offered to the model: in `allowed_tools` (or none given) and its combined name is usable. */
        allowed: z.boolean(),
      }),
    ),
    /** Set when the server could not be reached or listed (then `tools` is empty). */
    error: z.string().optional(),
  }),
);
