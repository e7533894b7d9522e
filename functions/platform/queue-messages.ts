import * as z from 'zod';
import type { QueueKey } from './resources.js';

/**
 * The one message shape of each queue (functions/platform/resources.ts names the queues). Producers
 * send it through `sendMessage` (typed by queue) and the consumer parses it with the same schema
 * (`queueConsumer`), so the two cannot drift apart. Every message carries ids only, never content.
 * Each schema is built by the first `messageSchema(queue)` of a container: a function parses one
 * queue's messages, and the others' are never built (zod schemas cost a cold start to build).
 */

/** `calls`: a new call to hand to the telephony provider (start-call; the sweeper for calls left in `created`). */
const DispatchMessage = () =>
  z.object({
    type: z.literal('call.dispatch'),
    call_id: z.string(),
    workspace_id: z.string(),
  });
export type DispatchMessage = z.infer<ReturnType<typeof DispatchMessage>>;

/** `postCall`: sent by the calling core when a call reaches completed or failed (maybe twice). */
const CallEndedMessage = () =>
  z.object({
    type: z.literal('call.ended'),
    call_id: z.string().min(1),
    workspace_id: z.string().min(1),
    organisation_id: z.string().min(1),
  });
export type CallEndedMessage = z.infer<ReturnType<typeof CallEndedMessage>>;

/** `postCallActions`: one message per post-call action of a call. */
const ActionMessage = () =>
  z.object({
    type: z.literal('post_call.action'),
    workspace_id: z.string().min(1),
    organisation_id: z.string().min(1),
    call_id: z.string().min(1),
    action_id: z.string().min(1),
    /** The action's type, when the sender knows it: what the run's read may take with it. */
    action_type: z.string().min(1).optional(),
  });
export type ActionMessage = z.infer<ReturnType<typeof ActionMessage>>;

/** `webhookDelivery`: one scheduled attempt of one webhook delivery. */
const AttemptMessage = () =>
  z.object({
    type: z.literal('webhook.attempt'),
    workspace_id: z.string().min(1),
    delivery_id: z.string().min(1),
    /** The scheduled attempt this message is for (1-based). */
    attempt: z.number().int().min(1),
    due_at: z.string().min(1),
  });
export type AttemptMessage = z.infer<ReturnType<typeof AttemptMessage>>;

/**
 * `imports`: a contact import's steps, and the purge of a deleted contact's items. `plan`: read the
 * uploaded file, count its rows and cut it into chunks (then one `chunk` message each); `chunk`: import
 * rows of one chunk; `purge`: delete what is left at a deleted contact's own key (its notes, call links
 * and call summary), a bounded number a message, then send itself again. Each may arrive twice.
 */
const ImportMessage = () =>
  z.discriminatedUnion('type', [
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
    z.object({
      type: z.literal('contacts.purge'),
      workspace_id: z.string().min(1),
      contact_id: z.string().min(1),
    }),
  ]);
export type ImportMessage = z.infer<ReturnType<typeof ImportMessage>>;

/**
 * `campaigns`: a campaign's work (functions/campaigns/). `upload.plan` / `upload.chunk`: an upload's
 * steps (the contact imports' machinery); `dial`: one pass of the dialer over the campaign (the
 * schedule sends one per running campaign each tick; a call's end sends one). Each may arrive twice.
 */
const CampaignMessage = () =>
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('campaign.upload.plan'),
      workspace_id: z.string().min(1),
      campaign_id: z.string().min(1),
      job_id: z.string().min(1),
    }),
    z.object({
      type: z.literal('campaign.upload.chunk'),
      workspace_id: z.string().min(1),
      campaign_id: z.string().min(1),
      job_id: z.string().min(1),
      chunk: z.number().int().min(0),
    }),
    z.object({
      type: z.literal('campaign.dial'),
      workspace_id: z.string().min(1),
      campaign_id: z.string().min(1),
    }),
  ]);
export type CampaignMessage = z.infer<ReturnType<typeof CampaignMessage>>;

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
const WorkspaceEventMessage = () =>
  z.object({
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
export type WorkspaceEventMessage = z.infer<ReturnType<typeof WorkspaceEventMessage>>;

/**
 * `workflowRuns`: advance one workflow run as far as it goes alone (functions/workflows/runs.ts): sent
 * when a run is triggered and when a stage is approved; may arrive twice.
 */
const WorkflowRunMessage = () =>
  z.object({
    type: z.literal('workflow.run.advance'),
    workspace_id: z.string().min(1),
    workflow_id: z.string().min(1),
    run_id: z.string().min(1),
  });
export type WorkflowRunMessage = z.infer<ReturnType<typeof WorkflowRunMessage>>;

/**
 * `knowledge`: a document's extraction (wait for its upload, read its text, cut it into passages) and
 * a knowledge base's index build (functions/knowledge/); both may arrive twice.
 */
const KnowledgeMessage = () =>
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('knowledge.document'),
      workspace_id: z.string().min(1),
      knowledge_base_id: z.string().min(1),
      item_id: z.string().min(1),
    }),
    z.object({
      type: z.literal('knowledge.index'),
      workspace_id: z.string().min(1),
      knowledge_base_id: z.string().min(1),
    }),
  ]);
export type KnowledgeMessage = z.infer<ReturnType<typeof KnowledgeMessage>>;

/** `integrations`: the next page of an integration's sync job (functions/integrations/sync.ts); may arrive twice. */
const IntegrationSyncMessage = () =>
  z.object({
    type: z.literal('integrations.sync.page'),
    workspace_id: z.string().min(1),
    integration_id: z.string().min(1),
    job_id: z.string().min(1),
  });
export type IntegrationSyncMessage = z.infer<ReturnType<typeof IntegrationSyncMessage>>;

/**
 * `sms`: SMS work in the background (functions/sms/). `send`: one outbound message held while billing
 * was past due, sent now; `campaign.page`: turn one page of an SMS campaign's audience into recipients
 * (then the next page); `campaign.chunk`: send the campaign's message to these recipients (contact
 * ids). Each may arrive twice.
 */
const SmsMessage = () =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('sms.send'), workspace_id: z.string().min(1), message_id: z.string().min(1) }),
    z.object({
      type: z.literal('sms.campaign.page'),
      workspace_id: z.string().min(1),
      campaign_id: z.string().min(1),
      page: z.number().int().min(0),
      cursor: z.string().nullable(),
      /** What the campaign keeps from its start (it cannot change then), so the page need not read it. */
      campaign: z
        .object({
          organisation_id: z.string().min(1),
          from_phone: z.string().min(1),
          audience: z.object({
            contact_ids: z.array(z.string().min(1)).optional(),
            tag: z.string().optional(),
            all: z.literal(true).optional(),
          }),
        })
        .optional(),
    }),
    z.object({
      type: z.literal('sms.campaign.chunk'),
      workspace_id: z.string().min(1),
      campaign_id: z.string().min(1),
      contact_ids: z.array(z.string().min(1)).min(1).max(100),
      /** The campaign's organisation and resolved sender, carried from its start. */
      organisation_id: z.string().min(1).optional(),
      from_phone: z.string().min(1).optional(),
      /** Sent again from the held list (its held item is deleted once done). */
      released: z.boolean().optional(),
    }),
  ]);
export type SmsMessage = z.infer<ReturnType<typeof SmsMessage>>;

/**
 * `evaluations`: one scenario of an agent evaluation run to play as a scripted call and judge
 * (functions/evaluations/): each scenario its own message, so a cancel stops the ones not yet played.
 */
const EvaluationMessage = () =>
  z.object({
    type: z.literal('evaluation.scenario'),
    workspace_id: z.string().min(1),
    agent_id: z.string().min(1),
    evaluation_id: z.string().min(1),
    index: z.number().int().min(0).max(99),
  });
export type EvaluationMessage = z.infer<ReturnType<typeof EvaluationMessage>>;

export const QUEUE_MESSAGES = {
  calls: DispatchMessage,
  postCall: CallEndedMessage,
  postCallActions: ActionMessage,
  webhookDelivery: AttemptMessage,
  imports: ImportMessage,
  campaigns: CampaignMessage,
  knowledge: KnowledgeMessage,
  integrations: IntegrationSyncMessage,
  workspaceEvents: WorkspaceEventMessage,
  workflowRuns: WorkflowRunMessage,
  sms: SmsMessage,
  evaluations: EvaluationMessage,
} as const satisfies Partial<Record<QueueKey, () => z.ZodType>>;

/** The queues that have a message shape (and so producers and a consumer). */
export type MessageQueue = keyof typeof QUEUE_MESSAGES;
export type QueueMessage<Q extends MessageQueue> = z.infer<ReturnType<(typeof QUEUE_MESSAGES)[Q]>>;
export type QueueMessageSchema<Q extends MessageQueue> = ReturnType<(typeof QUEUE_MESSAGES)[Q]>;

const built = new Map<MessageQueue, z.ZodType>();

/** The queue's message schema, built on first use. */
export function messageSchema<Q extends MessageQueue>(queue: Q): QueueMessageSchema<Q> {
  let schema = built.get(queue);
  if (!schema) {
    schema = QUEUE_MESSAGES[queue]();
    built.set(queue, schema);
  }
  return schema as QueueMessageSchema<Q>;
}
