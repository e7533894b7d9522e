import * as z from 'zod';
import { pageOf } from '../platform/pagination.js';
import { isPhoneCountry, toE164 } from '../platform/phone.js';
import { TimeZoneName } from '../platform/time-zones.js';
import { schemaOnFirstUse } from '../platform/first-use.js';
import { emailAddress, labelText } from '../platform/validation.js';

/**
 * Request and response shapes of the identity, organisation, workspace and member routes. Every
 * request body is strict: a field the caller may not set (`organisation_id`, `workspace_id`, `owner`,
 * `plan`, `credits`, `role` where it is not allowed, …) is 422 `extra_forbidden` and changes nothing.
 */

export const MAX_HOT_REPLY_ALERT_RECIPIENTS = 10;
export const MAX_INVITATION_WORKSPACES = 25;

const name = () => labelText().min(1).max(100);

/** ISO 3166 alpha-2 (`AU`, `nz` → `NZ`): a country whose phone numbering plan is known. */
const country = () =>
  z
    .string()
    .trim()
    .transform((value) => value.toUpperCase())
    .refine(isPhoneCountry, { message: 'country must be an ISO 3166 alpha-2 country code' });

/** A hot-reply alert recipient: an email address (lower-cased) or a phone number (normalised to E.164). */
const alertRecipient = () =>
  z
    .string()
    .trim()
    .min(1)
    .max(254)
    .transform((value, ctx) => {
      if (value.includes('@')) {
        if (z.email().safeParse(value).success) return value.toLowerCase();
      } else {
        const e164 = toE164(value);
        if (e164) return e164;
      }
      ctx.addIssue({
        code: 'custom',
        message: 'a recipient must be an email address or an E.164 phone number',
      });
      return z.NEVER;
    });

export const ORGANISATION_ROLE_INPUT = ['regular', 'admin'] as const;
export const WORKSPACE_ROLE_INPUT = ['admin', 'member', 'viewer'] as const;

// ── Requests ───────────────────────────────────────────────────────────────────────────────────────

export const UpdateMeBody = schemaOnFirstUse(() => z.strictObject({ name: name().nullable().optional() }));

export const CreateOrganisationBody = schemaOnFirstUse(() => z.strictObject({ name: name() }));
export const UpdateOrganisationBody = schemaOnFirstUse(() => z.strictObject({ name: name().optional() }));

export const InvitationBody = schemaOnFirstUse(() =>
  z.strictObject({
    email: emailAddress(),
    role: z.enum(ORGANISATION_ROLE_INPUT),
    workspaces: z
      .array(z.strictObject({ workspace_id: z.string().min(1).max(64), role: z.enum(WORKSPACE_ROLE_INPUT) }))
      .max(MAX_INVITATION_WORKSPACES)
      .refine((items) => new Set(items.map((w) => w.workspace_id)).size === items.length, {
        message: 'each workspace may appear once',
      })
      .optional(),
  }),
);
export type InvitationBody = z.infer<typeof InvitationBody>;

export const UpdateOrganisationMemberBody = schemaOnFirstUse(() =>
  z.strictObject({ role: z.enum(ORGANISATION_ROLE_INPUT) }),
);

export const CreateWorkspaceBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: name(),
    timezone: TimeZoneName.optional(),
    /** Phone numbers typed in national form are read in this country; default `AU`. */
    country: country().optional(),
  }),
);

export const UpdateWorkspaceBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: name().optional(),
    timezone: TimeZoneName.optional(),
    country: country().optional(),
    hot_reply_alert_recipients: z
      .array(alertRecipient())
      .max(MAX_HOT_REPLY_ALERT_RECIPIENTS)
      .refine((items) => new Set(items).size === items.length, { message: 'recipients must be unique' })
      .optional(),
    concurrent_call_limit: z.number().int().min(1).max(1000).optional(),
  }),
);
export type UpdateWorkspaceBody = z.infer<typeof UpdateWorkspaceBody>;

export const PutWorkspaceMemberBody = schemaOnFirstUse(() =>
  z.strictObject({ role: z.enum(WORKSPACE_ROLE_INPUT) }),
);

// ── Responses (documentation: the OpenAPI document is generated from these) ──────────────────────

export const VerifyResponse = schemaOnFirstUse(() => z.object({ user_id: z.string(), email: z.string() }));

export const MeResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    user_id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    organisations: z.array(
      z.object({
        organisation_id: z.string(),
        name: z.string().nullable(),
        role: z.enum(['owner', 'admin', 'regular']),
      }),
    ),
    created_at: z.string(),
  }),
);

export const OrganisationResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    organisation_id: z.string(),
    name: z.string(),
    owner_user_id: z.string(),
    role: z.enum(['owner', 'admin', 'regular']),
    plan: z.string().nullable(),
    credit_balance: z.number().nullable(),
    default_workspace_id: z.string().optional(),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  }),
);
export const OrganisationList = schemaOnFirstUse(() =>
  pageOf(
    OrganisationResponse.unwrap().omit({ plan: true, credit_balance: true, default_workspace_id: true }),
  ),
);

export const OrganisationMemberResponse = schemaOnFirstUse(() =>
  z.object({
    user_id: z.string().nullable(),
    email: z.string(),
    role: z.enum(['owner', 'admin', 'regular']),
    status: z.enum(['pending', 'accepted']),
    invitation_id: z.string().nullable(),
    joined_at: z.string().nullable(),
  }),
);
export const OrganisationMemberList = pageOf(OrganisationMemberResponse);

export const InvitationResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    invitation_id: z.string(),
    organisation_id: z.string(),
    email: z.string(),
    role: z.enum(ORGANISATION_ROLE_INPUT),
    workspaces: z.array(z.object({ workspace_id: z.string(), role: z.enum(WORKSPACE_ROLE_INPUT) })),
    status: z.enum(['pending', 'accepted']),
    email_sent: z.boolean(),
    send_count: z.number(),
    created_at: z.string(),
    last_sent_at: z.string().nullable(),
  }),
);
export const MyInvitationList = schemaOnFirstUse(() =>
  pageOf(
    z.object({
      id: z.string(),
      invitation_id: z.string(),
      organisation_id: z.string(),
      organisation_name: z.string().nullable(),
      role: z.enum(ORGANISATION_ROLE_INPUT),
      status: z.literal('pending'),
      created_at: z.string(),
    }),
  ),
);
export const AcceptInvitationResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    invitation_id: z.string(),
    organisation_id: z.string(),
    status: z.literal('accepted'),
    role: z.enum(ORGANISATION_ROLE_INPUT),
    workspaces: z.array(z.object({ workspace_id: z.string(), role: z.enum(WORKSPACE_ROLE_INPUT) })),
  }),
);

export const WorkspaceResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    organisation_id: z.string(),
    name: z.string(),
    timezone: z.string(),
    /** ISO 3166 alpha-2: national-format phone numbers (contacts) are read in this country. */
    country: z.string(),
    hot_reply_alert_recipients: z.array(z.string()),
    concurrent_call_limit: z.number(),
    role: z.enum(WORKSPACE_ROLE_INPUT).nullable(),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  }),
);
export const WorkspaceList = pageOf(WorkspaceResponse);

export const WorkspaceMemberResponse = schemaOnFirstUse(() =>
  z.object({
    user_id: z.string(),
    email: z.string(),
    role: z.enum(WORKSPACE_ROLE_INPUT),
    organisation_role: z.enum(['owner', 'admin', 'regular']),
    workspace_role: z.enum(WORKSPACE_ROLE_INPUT).nullable(),
  }),
);
export const WorkspaceMemberList = pageOf(WorkspaceMemberResponse);
