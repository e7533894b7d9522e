import * as z from 'zod';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { WORKSPACE_EVENT_TYPES } from '../platform/workspace-events.js';
import { endpointUrlProblem } from './endpoints.js';
import { DELIVERY_KINDS } from './entities.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/** Shapes of the developer routes for webhooks (docs/api.md "Developer tools"). */

export const WebhookSecretResponse = schemaOnFirstUse(() =>
  z.object({
    /** `whsec_…` (Standard Webhooks format). */
    secret: z.string(),
    /** Until when the secret before the last rotation still signs (a second `v1,` signature), or null. */
    previous_secret_expires_at: z.string().nullable(),
    created_at: z.string(),
    rotated_at: z.string().nullable(),
  }),
);

export const DeliveryAttemptResponse = schemaOnFirstUse(() =>
  z.object({
    at: z.string(),
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int(),
    error: z.string().nullable(),
    /** A resend by hand or a test send (not part of the retry schedule). */
    manual: z.boolean(),
  }),
);

export const DeliveryResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    webhook_id: z.string(),
    event_type: z.string(),
    call_id: z.string().nullable(),
    agent_id: z.string().nullable(),
    action_id: z.string().nullable(),
    /** The webhook endpoint (`whe_…`) and workspace event (`evt_…`) of an `event` delivery; else null. */
    endpoint_id: z.string().nullable(),
    event_id: z.string().nullable(),
    url: z.string(),
    kind: z.enum(DELIVERY_KINDS),
    state: z.enum(['pending', 'succeeded', 'dead']),
    next_attempt_at: z.string().nullable(),
    dead_reason: z.string().nullable(),
    attempts: z.array(DeliveryAttemptResponse),
    created_at: z.string(),
  }),
);

export const DeliveryList = pageOf(DeliveryResponse);

export const ListDeliveriesQuery = schemaOnFirstUse(() =>
  ListQuery.extend({
    call_id: z.string().min(1).max(64).optional(),
    /** One webhook endpoint's deliveries (`whe_…`). */
    endpoint_id: z.string().min(1).max(64).optional(),
  }),
);
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

/** `POST …/post-call-actions/{action_id}/test`: no body (or an empty object). */
export const TestActionBody = schemaOnFirstUse(() => z.strictObject({}).optional());

export const TestActionResponse = schemaOnFirstUse(() =>
  z.object({
    delivery: DeliveryResponse,
    /** The attempt just made. */
    attempt: DeliveryAttemptResponse,
  }),
);

// ── Webhook endpoints: workspace events to a customer's URL (docs/api.md "Workspace webhook endpoints") ──

const EndpointUrl = schemaOnFirstUse(() =>
  z.string().superRefine((url, ctx) => {
    const problem = endpointUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: url });
  }),
);

/** One or more event types, each once (a repeated type is kept once). */
const EventTypes = schemaOnFirstUse(() =>
  z
    .array(z.enum(WORKSPACE_EVENT_TYPES))
    .min(1)
    .max(WORKSPACE_EVENT_TYPES.length * 2)
    .transform((types) => [...new Set(types)]),
);

export const CreateEndpointBody = schemaOnFirstUse(() =>
  z.strictObject({
    url: EndpointUrl,
    event_types: EventTypes,
    enabled: z.boolean().default(true),
  }),
);
export type CreateEndpointBody = z.infer<typeof CreateEndpointBody>;

export const UpdateEndpointBody = schemaOnFirstUse(() =>
  z.strictObject({
    url: EndpointUrl.optional(),
    event_types: EventTypes.optional(),
    enabled: z.boolean().optional(),
  }),
);
export type UpdateEndpointBody = z.infer<typeof UpdateEndpointBody>;

export const EndpointResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    url: z.string(),
    event_types: z.array(z.enum(WORKSPACE_EVENT_TYPES)),
    enabled: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

/** Every endpoint of the workspace (at most 20, one page: `next_cursor` is always null). */
export const EndpointList = pageOf(EndpointResponse);
