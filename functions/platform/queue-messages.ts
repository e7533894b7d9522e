import * as z from 'zod';
import type { QueueKey } from './resources.js';

/**
 * The one message shape of each queue (functions/platform/resources.ts names the queues). Producers
 * send it through `sendMessage` (typed by queue) and the consumer parses it with the same schema
 * (`queueConsumer`), so the two cannot drift apart. Every message carries ids only, never content.
 */

/** `calls`: a new call to hand to the telephony provider (start-call; the sweeper for calls left in `created`). */
export const DispatchMessage = z.object({
  type: z.literal('call.dispatch'),
  call_id: z.string(),
  workspace_id: z.string(),
});
export type DispatchMessage = z.infer<typeof DispatchMessage>;

/** `postCall`: sent by the calling core when a call reaches completed or failed (maybe twice). */
export const CallEndedMessage = z.object({
  type: z.literal('call.ended'),
  call_id: z.string().min(1),
  workspace_id: z.string().min(1),
  organisation_id: z.string().min(1),
});
export type CallEndedMessage = z.infer<typeof CallEndedMessage>;

/** `postCallActions`: one message per post-call action of a call. */
export const ActionMessage = z.object({
  type: z.literal('post_call.action'),
  workspace_id: z.string().min(1),
  organisation_id: z.string().min(1),
  call_id: z.string().min(1),
  action_id: z.string().min(1),
});
export type ActionMessage = z.infer<typeof ActionMessage>;

/** `webhookDelivery`: one scheduled attempt of one webhook delivery. */
export const AttemptMessage = z.object({
  type: z.literal('webhook.attempt'),
  workspace_id: z.string().min(1),
  delivery_id: z.string().min(1),
  /** The scheduled attempt this message is for (1-based). */
  attempt: z.number().int().min(1),
  due_at: z.string().min(1),
});
export type AttemptMessage = z.infer<typeof AttemptMessage>;

/**
 * `imports`: a contact import's steps. `plan`: read the uploaded file, count its rows and cut it into
 * chunks (then one `chunk` message each); `chunk`: import rows of one chunk. Both may arrive twice.
 */
export const ImportMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('contacts.import.plan'),
    workspace_id: z.string().min(1),
    job_id: z.string().min(1),
  }),
  z.object({
    type: z.literal('contacts.import.chunk'),
    workspace_id: z.string().min(1),
    job_id: z.string().min(1),
    chunk: z.number().int().min(0),
  }),
]);
export type ImportMessage = z.infer<typeof ImportMessage>;

/** The types of workspace events (functions/platform/workspace-events.ts re-exports them). */
export const WORKSPACE_EVENT_TYPES = [
  'call.ended',
  'listing.sold',
  'sms.received',
  'contact.created',
  'campaign.completed',
  'workflow.completed',
] as const;

/**
 * `workspaceEvents`: one workspace event (functions/platform/workspace-events.ts). Unlike the other
 * messages it carries the event's data; its id is the publisher's deterministic event id.
 */
export const WorkspaceEventMessage = z.object({
  type: z.literal('workspace.event'),
  event: z.object({
    id: z.string().min(1).max(200),
    type: z.enum(WORKSPACE_EVENT_TYPES),
    workspace_id: z.string().min(1),
    organisation_id: z.string().min(1),
    occurred_at: z.string().min(1),
    data: z.record(z.string(), z.unknown()),
  }),
});
export type WorkspaceEventMessage = z.infer<typeof WorkspaceEventMessage>;

export const QUEUE_MESSAGES = {
  calls: DispatchMessage,
  postCall: CallEndedMessage,
  postCallActions: ActionMessage,
  webhookDelivery: AttemptMessage,
  imports: ImportMessage,
  workspaceEvents: WorkspaceEventMessage,
} as const satisfies Partial<Record<QueueKey, z.ZodType>>;

/** The queues that have a message shape (and so producers and a consumer). */
export type MessageQueue = keyof typeof QUEUE_MESSAGES;
export type QueueMessage<Q extends MessageQueue> = z.infer<(typeof QUEUE_MESSAGES)[Q]>;
