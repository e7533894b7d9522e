import * as z from 'zod';
import { ListQuery, pageOf } from '../platform/pagination.js';

/** Shapes of the developer routes for webhooks (docs/api.md "Developer tools"). */

export const WebhookSecretResponse = z.object({
  /** `whsec_…` (Standard Webhooks format). */
  secret: z.string(),
  /** Until when the secret before the last rotation still signs (a second `v1,` signature), or null. */
  previous_secret_expires_at: z.string().nullable(),
  created_at: z.string(),
  rotated_at: z.string().nullable(),
});

export const DeliveryAttemptResponse = z.object({
  at: z.string(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int(),
  error: z.string().nullable(),
  /** A resend by hand or a test send (not part of the retry schedule). */
  manual: z.boolean(),
});

export const DeliveryResponse = z.object({
  id: z.string(),
  webhook_id: z.string(),
  event_type: z.string(),
  call_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  action_id: z.string().nullable(),
  url: z.string(),
  kind: z.enum(['post_call', 'test']),
  state: z.enum(['pending', 'succeeded', 'dead']),
  next_attempt_at: z.string().nullable(),
  dead_reason: z.string().nullable(),
  attempts: z.array(DeliveryAttemptResponse),
  created_at: z.string(),
});

export const DeliveryList = pageOf(DeliveryResponse);

export const ListDeliveriesQuery = ListQuery.extend({
  call_id: z.string().min(1).max(64).optional(),
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

/** `POST …/post-call-actions/{action_id}/test`: no body (or an empty object). */
export const TestActionBody = z.strictObject({}).optional();

export const TestActionResponse = z.object({
  delivery: DeliveryResponse,
  /** The attempt just made. */
  attempt: DeliveryAttemptResponse,
});
