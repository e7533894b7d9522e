import * as z from 'zod';
import { freeText, labelText } from '../platform/validation.js';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { CAMPAIGN_STATUSES, MESSAGE_DIRECTIONS, MESSAGE_KINDS, MESSAGE_STATUSES } from './entities.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/**
 * Request and response shapes of the SMS routes. Bodies are strict (an unknown field is 422
 * `extra_forbidden`). A message body is 1–1,600 characters (after trimming); `{{first_name}}`-style
 * placeholders in a campaign's body are filled from each contact (functions/sms/campaign-chunks.ts).
 */

export const MAX_SMS_BODY = 1600;
export const MAX_AUDIENCE_CONTACTS = 5000;

const smsBody = () => freeText().trim().min(1).max(MAX_SMS_BODY);
const phone = () => z.string().trim().min(1).max(40);

export const SendSmsBody = schemaOnFirstUse(() =>
  z.strictObject({
    to_phone: phone(),
    body: smsBody(),
    from_phone: phone().optional(),
  }),
);

export const ReplyBody = schemaOnFirstUse(() => z.strictObject({ body: smsBody() }));

export const Audience = schemaOnFirstUse(() =>
  z
    .strictObject({
      contact_ids: z
        .array(z.string().min(1).max(64))
        .min(1)
        .max(MAX_AUDIENCE_CONTACTS)
        .transform((ids) => [...new Set(ids)])
        .optional(),
      tag: z.string().trim().min(1).max(50).optional(),
      all: z.literal(true).optional(),
    })
    .refine(
      (audience) =>
        [audience.contact_ids !== undefined, audience.tag !== undefined, audience.all === true].filter(
          Boolean,
        ).length === 1,
      { message: 'the audience is exactly one of contact_ids, tag or all: true' },
    )
    .meta({ examples: [{ tag: 'buyers' }] }),
);
export type Audience = z.infer<typeof Audience>;

export const CreateCampaignBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: labelText().min(1).max(200),
    body: smsBody(),
    from_phone: phone().optional(),
    audience: Audience,
  }),
);
export type CreateCampaignBody = z.infer<typeof CreateCampaignBody>;

export const UpdateCampaignBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      name: labelText().min(1).max(200).optional(),
      body: smsBody().optional(),
      from_phone: phone().nullable().optional(),
      audience: Audience.optional(),
      status: z.enum(['sending', 'cancelled']).optional(),
    })
    .refine((body) => Object.keys(body).length > 0, { message: 'nothing to change' }),
);
export type UpdateCampaignBody = z.infer<typeof UpdateCampaignBody>;

export const CompareQuery = schemaOnFirstUse(() =>
  z.strictObject({
    ids: z
      .string()
      .trim()
      .min(1)
      .transform((value) =>
        value
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean),
      )
      .refine((ids) => ids.length >= 2 && ids.length <= 5, { message: 'compare 2 to 5 campaigns' })
      .refine((ids) => new Set(ids).size === ids.length, { message: 'each campaign may appear once' }),
  }),
);

export const InboxQuery = ListQuery;

// ── Responses ────────────────────────────────────────────────────────────────────────────────────────

export const MessageResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    direction: z.enum(MESSAGE_DIRECTIONS),
    kind: z.enum(MESSAGE_KINDS),
    contact_id: z.string(),
    to_phone: z.string(),
    from_phone: z.string(),
    body: z.string(),
    segments: z.number(),
    encoding: z.string(),
    credits: z.number(),
    status: z.enum(MESSAGE_STATUSES),
    failure_reason: z.string().nullable(),
    held: z.boolean(),
    campaign_id: z.string().nullable(),
    in_reply_to: z.string().nullable(),
    hot: z.boolean(),
    created_at: z.string(),
    sent_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
  }),
);
export const MessageList = pageOf(MessageResponse);

export const ThreadResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    contact_id: z.string(),
    phone: z.string().nullable(),
    last_message: z.string().nullable(),
    last_message_at: z.string(),
    unread: z.number(),
  }),
);
export const ThreadList = pageOf(ThreadResponse);

/** A campaign's status and counts, in its response and in the comparison. */
const campaignCounts = () => ({
  status: z.enum(CAMPAIGN_STATUSES),
  recipients: z.number(),
  sent: z.number(),
  delivered: z.number(),
  failed: z.number(),
  skipped: z.number(),
  replies: z.number(),
  opt_outs: z.number(),
  credits: z.number(),
});

export const CampaignResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    campaign_id: z.string(),
    name: z.string(),
    body: z.string(),
    from_phone: z.string().nullable(),
    audience: z.object({
      contact_ids: z.array(z.string()).nullable(),
      tag: z.string().nullable(),
      all: z.boolean(),
    }),
    ...campaignCounts(),
    progress: z.object({ done: z.number(), total: z.number() }),
    created_at: z.string(),
    updated_at: z.string().nullable(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
  }),
);
export const CampaignList = pageOf(CampaignResponse);

export const ComparisonResponse = schemaOnFirstUse(() =>
  z.object({
    items: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        ...campaignCounts(),
        delivery_rate: z.number(),
        reply_rate: z.number(),
        opt_out_rate: z.number(),
      }),
    ),
    /** Always null: the comparison is one page (a list's shape, so clients page it like any other). */
    next_cursor: z.null(),
  }),
);
