import type { ZodType } from 'zod';
import { ID_PREFIXES } from './ids.js';

/**
 * Examples for the OpenAPI document, so the reference shows real values (`ag_01JD…`, `+61491570156`,
 * `2026-11-22T01:30:00.000Z`), not "string". A schema's own example (`.meta({ examples: [...] })`) wins;
 * otherwise the value is made from the field's name, format and limits. An example is offered only if
 * the route's own zod schema accepts it (a full one, else one with the required fields only), so the
 * document never shows a body the route would refuse; test/unit/api-docs.test.ts checks every one.
 */

type JsonSchema = Record<string, unknown>;

const ULID = '01JD8X3T6QW5R2K9M4N7P1B3C5';
const TIME = '2026-11-22T01:30:00.000Z';
const PHONE = '+61491570156';

/** A field or path parameter named for a kind of id (`agent_id`, `kb_id`) → its prefix. */
const ID_FIELDS: Record<string, string> = {
  organisation: ID_PREFIXES.organisation,
  workspace: ID_PREFIXES.workspace,
  user: ID_PREFIXES.user,
  member: ID_PREFIXES.user,
  created_by: ID_PREFIXES.user,
  agent: ID_PREFIXES.agent,
  phone_number: ID_PREFIXES.phoneNumber,
  number: ID_PREFIXES.phoneNumber,
  call: ID_PREFIXES.call,
  key: ID_PREFIXES.apiKey,
  api_key: ID_PREFIXES.apiKey,
  invitation: ID_PREFIXES.invitation,
  contact: ID_PREFIXES.contact,
  note: ID_PREFIXES.note,
  campaign: ID_PREFIXES.campaign,
  batch_contact: ID_PREFIXES.batchContact,
  job: ID_PREFIXES.job,
  import: ID_PREFIXES.job,
  upload: ID_PREFIXES.job,
  kb: ID_PREFIXES.knowledgeBase,
  knowledge_base: ID_PREFIXES.knowledgeBase,
  item: ID_PREFIXES.knowledgeItem,
  integration: ID_PREFIXES.integration,
  workflow: ID_PREFIXES.workflow,
  run: ID_PREFIXES.workflowRun,
  action: ID_PREFIXES.action,
  delivery: ID_PREFIXES.delivery,
  message: ID_PREFIXES.message,
  event: ID_PREFIXES.event,
  evaluation: ID_PREFIXES.evaluation,
  endpoint: ID_PREFIXES.webhookEndpoint,
  sms: ID_PREFIXES.sms,
  thread: ID_PREFIXES.contact,
  entry: ID_PREFIXES.ledgerEntry,
};

/** A collection in a path (`…/agents/{agent_id}`) → the prefix of its items' `id`. */
const COLLECTIONS: Record<string, string> = {
  organisations: 'organisation',
  workspaces: 'workspace',
  members: 'user',
  agents: 'agent',
  'phone-numbers': 'phone_number',
  calls: 'call',
  'api-keys': 'key',
  invitations: 'invitation',
  contacts: 'contact',
  notes: 'note',
  campaigns: 'campaign',
  'sms-campaigns': 'campaign',
  jobs: 'job',
  imports: 'job',
  uploads: 'job',
  'knowledge-bases': 'kb',
  items: 'item',
  integrations: 'integration',
  workflows: 'workflow',
  triggers: 'workflow',
  runs: 'run',
  'webhook-deliveries': 'delivery',
  'webhook-endpoints': 'endpoint',
  evaluations: 'evaluation',
  sms: 'sms',
  ledger: 'entry',
  'post-call-actions': 'action',
  'start-call': 'call',
};

/** Arrays of objects whose items' `id` is of a kind of its own (`post_call_actions[].id`). */
const ARRAY_ITEMS: Record<string, string> = {
  post_call_actions: 'action',
  notes: 'note',
  members: 'user',
  workspaces: 'workspace',
  organisations: 'organisation',
  attempts: 'delivery',
  replies: 'message',
  messages: 'message',
  scenarios: 'evaluation',
};

/** A `name` by the kind of thing named. */
const NAMES: Record<string, string> = {
  workflow: 'Follow up hot leads',
  agent: 'Front desk',
  campaign: 'Spring open homes',
  workspace: 'Perth office',
  organisation: 'Harbour Realty',
  kb: 'Listings',
  integration: 'HubSpot',
  key: 'CRM sync',
  endpoint: 'CRM',
  evaluation: 'Booking scenarios',
};

const idOf = (kind: string | undefined): string | undefined => {
  const prefix = kind === undefined ? undefined : ID_FIELDS[kind];
  return prefix === undefined ? undefined : `${prefix}_${ULID}`;
};

/** The kind of a path's own resource: its last collection (`/agents/{agent_id}` → `agent`). */
function resourceOf(path: string): string | undefined {
  const segments = path.split('/').filter((s) => s && !s.startsWith('{'));
  for (const segment of segments.reverse()) if (COLLECTIONS[segment]) return COLLECTIONS[segment];
  return undefined;
}

export function pathParameterExample(name: string, path: string): string {
  const kind = name.replace(/_id$/, '');
  if (name === 'stage') return 'task';
  if (name === 'code') return 'x7Kp2QaZ';
  return idOf(kind) ?? idOf(resourceOf(path)) ?? `${name}-1`;
}

interface Context {
  path?: string;
  /** The kind of the object being filled (its `id`). */
  kind?: string;
}

const fit = (text: string, schema: JsonSchema): string => {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let value = text;
  while (value.length < min) value += 'x';
  return value.length > max ? value.slice(0, max) : value;
};

function stringExample(name: string, schema: JsonSchema, context: Context): string {
  const format = schema.format;
  if (format === 'date-time') return TIME;
  if (format === 'date') return TIME.slice(0, 10);
  if (format === 'email') return 'ana.silva@example.com';
  if (format === 'uri' || format === 'url') return 'https://example.com/hooks/voice-agent';
  if (format === 'uuid') return '3f2b9c1e-7d4a-4b8e-9f0a-1c2d3e4f5a6b';
  const n = name.toLowerCase();
  if (n === 'id') return idOf(context.kind) ?? idOf(resourceOf(context.path ?? '')) ?? `id_${ULID}`;
  if (n.endsWith('_id')) {
    const id = idOf(n.slice(0, -3)) ?? idOf(n.slice(0, -3).split('_').at(-1));
    if (id) return id;
  }
  if (n === 'created_by' || n === 'updated_by') return `${ID_PREFIXES.user}_${ULID}`;
  if (/(^|_)(at|time|until|since|from|to)$/.test(n) && /_at$|until|since|time/.test(n)) return TIME;
  if (n === 'date' || n.endsWith('_date') || n === 'day') return TIME.slice(0, 10);
  if (/phone|^to$|^from$|_number$|^number$|e164/.test(n)) return PHONE;
  if (/email/.test(n)) return 'ana.silva@example.com';
  if (/url$|^url|webhook/.test(n)) return 'https://example.com/hooks/voice-agent';
  if (n === 'first_name') return 'Ana';
  if (n === 'last_name') return 'Silva';
  if (n === 'name')
    return fit(NAMES[context.kind ?? resourceOf(context.path ?? '') ?? ''] ?? 'Ana Silva', schema);
  if (n === 'full_name') return fit('Ana Silva', schema);
  if (n === 'field') return 'sentiment';
  if (/time_?zone/.test(n)) return 'Australia/Perth';
  if (n === 'country') return 'AU';
  if (n === 'currency') return 'aud';
  if (/cursor/.test(n)) return 'eyJwayI6IndzXzAxSkQ4In0';
  if (n === 'secret') return 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  if (n === 'key') return `vak_${ULID}_3xYkq9VbQmT2LrWp8ZsNc4Hd`;
  if (/suburb/.test(n)) return 'Fremantle';
  if (n === 'state') return 'WA';
  if (n === 'postcode') return '6160';
  if (n === 'external_id') return 'L-1001';
  if (n === 'price_text') return 'Offers over $1,250,000';
  if (n === 'file_name') return 'brochure.pdf';
  if (n === 'content_type') return 'application/pdf';
  if (n === 'tag' || n === 'tags') return 'buyer';
  if (n === 'voice') return fit('alloy', schema);
  if (n === 'language') return 'en-AU';
  if (/address/.test(n)) return fit('12 Marine Parade, Cottesloe WA 6011', schema);
  if (/title|subject/.test(n)) return fit('Open home on Saturday', schema);
  if (n === 'greeting') return fit('Hi, this is the front desk of Harbour Realty. How can I help?', schema);
  if (/prompt|body|text|message|description|summary|note|passage|transcript|content/.test(n))
    return fit('Hi {{first_name}}, thanks for your time today.', schema);
  return fit('example', schema);
}

function numberExample(name: string, schema: JsonSchema): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const n = name.toLowerCase();
  let value = /seconds|duration/.test(n)
    ? 95
    : /limit|count|total|size|credits|balance|amount/.test(n)
      ? 25
      : 1;
  if (schema.type === 'number' && /score|rate|ratio|sentiment/.test(n)) value = 0.8;
  if (min !== undefined && value < min) value = min;
  if (max !== undefined && value > max) value = max;
  return value;
}

interface Options {
  /** Optional fields too (the fuller example), or only the required ones. */
  full: boolean;
  root: JsonSchema;
  depth: number;
}

const resolve = (schema: JsonSchema, root: JsonSchema): JsonSchema => {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/')) target = (target as JsonSchema | undefined)?.[part];
  return (target as JsonSchema | undefined) ?? {};
};

function build(raw: JsonSchema, name: string, context: Context, options: Options): unknown {
  const schema = resolve(raw, options.root);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  // A default shows a real value, unless it is empty (`""`, `[]`, `{}`): then a made-up one says more.
  const fallback = schema.default;
  if (fallback !== undefined && fallback !== '' && (typeof fallback !== 'object' || fallback === null))
    return fallback;
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union) && union.length > 0) {
    const nonNull = union.filter((v) => resolve(v, options.root).type !== 'null');
    return build(nonNull[0] ?? union[0], name, context, options);
  }
  if (options.depth > 8) return undefined;
  const next = { ...options, depth: options.depth + 1 };
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required ?? []) as string[]);
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(properties)) {
        if (!options.full && !required.has(key)) continue;
        // An object's own `id` is of the object's kind; its other fields start afresh.
        const child = build(value, key, { ...context, kind: key === 'id' ? context.kind : undefined }, next);
        // A required field of any type (`z.unknown().nullable()`): null is the one value to show.
        if (child !== undefined) out[key] = child;
        else if (required.has(key)) out[key] = null;
      }
      const values = schema.additionalProperties;
      if (Object.keys(properties).length === 0 && values && typeof values === 'object' && options.full) {
        const child = build(values as JsonSchema, 'value', context, next);
        const keys = ((schema.propertyNames ?? {}) as JsonSchema).enum;
        const key = Array.isArray(keys)
          ? String(keys[0])
          : name === 'attributes' || name === 'parameters'
            ? 'suburb'
            : 'key';
        if (child !== undefined) out[key] = child;
      }
      return out;
    }
    case 'array': {
      const items = (schema.items ?? {}) as JsonSchema;
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      if (!options.full && min === 0) return [];
      const kind = ARRAY_ITEMS[name] ?? (name === 'items' ? context.kind : undefined);
      const item = build(items, name.replace(/s$/, ''), { ...context, kind }, next);
      if (item === undefined) return [];
      return Array.from({ length: Math.max(1, min) }, () => item);
    }
    case 'string':
      return stringExample(name, schema, context);
    case 'integer':
    case 'number':
      return numberExample(name, schema);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/**
 * An example of `json` (the zod schema `zod` written as JSON Schema) that `zod` accepts: the fuller
 * one, else the one with the required fields only; undefined when neither passes.
 */
export function exampleFor(zod: ZodType, json: JsonSchema, context: Context): unknown {
  return exampleCandidates(json, context).find((example) => zod.safeParse(example).success);
}

/** The examples `exampleFor` tries, fullest first. */
export function exampleCandidates(json: JsonSchema, context: Context = {}): unknown[] {
  return [true, false]
    .map((full) => build(json, 'body', context, { full, root: json, depth: 0 }))
    .filter((example) => example !== undefined);
}
