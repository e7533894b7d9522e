import * as z from 'zod';
import { freeText, labelText } from '../platform/validation.js';
import { UpdateContactBody } from '../contacts/schemas.js';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/**
 * Request and response shapes of the workflow routes (docs/api.md, Workflows). Bodies are strict: an
 * unknown field is 422 `extra_forbidden`.
 */

/** The workspace events a workflow may be triggered by. */
export const WORKFLOW_TRIGGER_EVENTS = [
  'call.ended',
  'listing.sold',
  'sms.received',
  'contact.created',
] as const;
export type WorkflowTriggerEvent = (typeof WORKFLOW_TRIGGER_EVENTS)[number];

export const CONDITION_OPS = ['eq', 'neq', 'contains', 'gt', 'lt'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export const STAGES = ['signal', 'task', 'outcome'] as const;
export type StageName = (typeof STAGES)[number];

export const STAGE_STATES = [
  'pending',
  'waiting_review',
  'approved',
  'rejected',
  'done',
  'failed',
  'skipped',
] as const;
export type StageState = (typeof STAGE_STATES)[number];

export const RUN_STATUSES = ['running', 'waiting_review', 'completed', 'rejected', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const MAX_CONDITIONS = 20;
/** The external trigger's body: a JSON object of at most 64 KB. */
export const MAX_TRIGGER_PAYLOAD_BYTES = 64 * 1024;

const Trigger = schemaOnFirstUse(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('event'), event: z.enum(WORKFLOW_TRIGGER_EVENTS) }),
    z.strictObject({ type: z.literal('external') }),
  ]),
);
export type Trigger = z.infer<typeof Trigger>;

/**
 * One condition of the Signal stage: `field` is a dotted path into the event's data (`sentiment`,
 * `listing.suburb`, `event.hot`) or, prefixed with `contact.`, into the contact (`contact.tags`,
 * `contact.attributes.suburb`, `contact.last_call.sentiment`).
 */
const Condition = schemaOnFirstUse(() =>
  z.strictObject({
    field: z.string().trim().min(1).max(200),
    op: z.enum(CONDITION_OPS),
    value: z.union([z.string().max(1000), z.number(), z.boolean()]),
  }),
);
export type Condition = z.infer<typeof Condition>;

const Parameters = schemaOnFirstUse(() =>
  z
    .record(z.string().min(1).max(64), z.string().max(1000))
    .refine((value) => Object.keys(value).length <= 50, { message: 'at most 50 parameters' }),
);

/** A recipient given in the action: a phone number or address, or a `{{placeholder}}` naming one. */
const Recipient = schemaOnFirstUse(() => z.string().trim().min(1).max(254));

/**
 * The Task stage's one action. Text fields may name event or contact fields as `{{path}}`
 * (`{{contact.first_name}}`, `{{suburb}}`), filled in when the task runs. A call, SMS or email goes to
 * the run's contact unless the action names its recipient (`to_phone`, `to`): a `listing.sold` event,
 * for one, has no contact.
 */
export const Action = schemaOnFirstUse(() =>
  z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('call'),
      agent_id: z.string().min(1).max(64),
      /** The call's dynamic variables, as start-call's `parameters`. */
      parameters: Parameters.optional(),
      /** Whom to call (E.164, or a placeholder); default: the run's contact. */
      to_phone: Recipient.optional(),
    }),
    z.strictObject({
      type: z.literal('sms'),
      body: freeText().trim().min(1).max(1600),
      /** Whom to text (E.164, or a placeholder); default: the run's contact. */
      to_phone: Recipient.optional(),
    }),
    z.strictObject({
      type: z.literal('email'),
      subject: labelText().min(1).max(200),
      body: freeText().trim().min(1).max(10_000),
      /** Whom to write to (an address, or a placeholder); default: the run's contact. */
      to: Recipient.optional(),
    }),
    z.strictObject({ type: z.literal('update_contact'), fields: UpdateContactBody }),
    z.strictObject({ type: z.literal('add_note'), text: freeText().trim().min(1).max(500) }),
  ]),
);
export type Action = z.infer<typeof Action>;
export type ActionType = Action['type'];

const SignalStage = schemaOnFirstUse(() =>
  z.strictObject({
    yolo: z.boolean().default(false),
    conditions: z.array(Condition).max(MAX_CONDITIONS).default([]),
  }),
);
const TaskStage = schemaOnFirstUse(() =>
  z.strictObject({ yolo: z.boolean().default(false), action: Action }),
);
const OutcomeStage = schemaOnFirstUse(() =>
  z.strictObject({
    yolo: z.boolean().default(false),
    /** Emit the `workflow.completed` workspace event (webhooks) when the run completes. Default true. */
    emit_event: z.boolean().default(true),
  }),
);

export const Stages = schemaOnFirstUse(() =>
  z.strictObject({ signal: SignalStage, task: TaskStage, outcome: OutcomeStage }),
);
export type Stages = z.infer<typeof Stages>;

export const CreateWorkflowBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: labelText().min(1).max(100),
    trigger: Trigger,
    auto_mode: z.boolean().default(false),
    stages: Stages,
    enabled: z.boolean().default(true),
  }),
);
export type CreateWorkflowBody = z.infer<typeof CreateWorkflowBody>;

/** Every field optional; a stage given replaces that stage whole. */
export const UpdateWorkflowBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: labelText().min(1).max(100).optional(),
    trigger: Trigger.optional(),
    auto_mode: z.boolean().optional(),
    stages: z
      .strictObject({
        signal: SignalStage.optional(),
        task: TaskStage.optional(),
        outcome: OutcomeStage.optional(),
      })
      .optional(),
    enabled: z.boolean().optional(),
  }),
);
export type UpdateWorkflowBody = z.infer<typeof UpdateWorkflowBody>;

export const WorkflowResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    trigger: Trigger,
    auto_mode: z.boolean(),
    stages: Stages,
    enabled: z.boolean(),
    /** Where an external trigger posts (`type: external` only). */
    trigger_url: z.string().nullable(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const WorkflowList = pageOf(WorkflowResponse);

const StageView = schemaOnFirstUse(() =>
  z.object({
    state: z.enum(STAGE_STATES),
    /** The stage's setting when the run was triggered. */
    yolo: z.boolean(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.string().optional(),
    updated_at: z.string().nullable(),
  }),
);

export const RunResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workflow_id: z.string(),
    workspace_id: z.string(),
    event: z.object({
      id: z.string(),
      type: z.string(),
      occurred_at: z.string(),
      data: z.record(z.string(), z.unknown()),
    }),
    contact_id: z.string().nullable(),
    /** The workflow's auto_mode when the run was triggered. */
    auto_mode: z.boolean(),
    status: z.enum(RUN_STATUSES),
    stages: z.object({ signal: StageView, task: StageView, outcome: StageView }),
    created_at: z.string(),
    updated_at: z.string(),
    completed_at: z.string().nullable(),
  }),
);
export const RunList = pageOf(RunResponse);

/**
 * At most 50 runs a page (default 50): a run carries its event, up to 64 KB from an external trigger,
 * and a page must stay well under Lambda's 6 MB response.
 */
export const RUN_PAGE_SIZE = 50;
export const RunListQuery = schemaOnFirstUse(() =>
  ListQuery.extend({
    limit: z.coerce.number().int().min(1).max(RUN_PAGE_SIZE).default(RUN_PAGE_SIZE),
    status: z.enum(RUN_STATUSES).optional(),
  }),
);
export type RunListQuery = z.infer<typeof RunListQuery>;

/** The external trigger's body: any JSON object (its size is checked on the raw body: 413). */
export const TriggerBody = schemaOnFirstUse(() => z.record(z.string(), z.unknown()));
export const TriggerResponse = schemaOnFirstUse(() => z.object({ id: z.string(), run_id: z.string() }));
