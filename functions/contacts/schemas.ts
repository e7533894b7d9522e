import * as z from 'zod';
import { TimeZoneName } from '../platform/time-zones.js';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { NOTE_CHANNELS } from './model.js';
import { CONTACTABILITY_CODES, INPUT_SOURCE_CODES, SOURCE_CODES } from './views.js';
import { schemaOnFirstUse } from '../platform/first-use.js';
import { emailAddress, freeText, labelText } from '../platform/validation.js';

/**
 * Request and response shapes of the contact, note and suppression-list routes. Bodies are strict
 * (an unknown field is 422 `extra_forbidden`). A phone number is checked here for its shape only: it
 * is read in the workspace's country by the service (national `0491 570 156` or international
 * `+61 491 570 156`), which answers 422 on `body.phone` when it is not a valid number.
 */

export const CONTACT_PAGE_SIZE = 50;
export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 50;
export const MAX_ATTRIBUTES = 50;
export const MAX_ATTRIBUTE_KEY_LENGTH = 64;
export const MAX_ATTRIBUTE_VALUE_LENGTH = 1000;
export const MAX_NOTE_LENGTH = 500;

const personName = () => labelText().max(100);
const phone = () => z.string().trim().min(1).max(40);

/** Tags: trimmed, 1–50 characters, at most 50; repeats (ignoring case) are dropped, the first kept. */
const tags = () =>
  z
    .array(labelText().min(1).max(MAX_TAG_LENGTH))
    .max(MAX_TAGS)
    .transform((values) => {
      const seen = new Set<string>();
      return values.filter((tag) => {
        const key = tag.toLowerCase();
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    });

const attributeKey = () => labelText().min(1).max(MAX_ATTRIBUTE_KEY_LENGTH);
const attributeValue = () => freeText().max(MAX_ATTRIBUTE_VALUE_LENGTH);
const tooManyAttributes = (record: Record<string, unknown>) => Object.keys(record).length <= MAX_ATTRIBUTES;

/** Custom attributes: string keys (1–64 characters) to string values (up to 1000), at most 50. */
const attributes = () =>
  z
    .record(attributeKey(), attributeValue())
    .refine(tooManyAttributes, { message: `at most ${MAX_ATTRIBUTES} attributes` });

/** In a PATCH, a merge patch: a key with a string is set, a key with null removed, others kept. */
const attributesPatch = () =>
  z
    .record(attributeKey(), attributeValue().nullable())
    .refine(tooManyAttributes, { message: `at most ${MAX_ATTRIBUTES} attributes` });

export const CreateContactBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      first_name: personName().optional(),
      last_name: personName().optional(),
      phone: phone().nullable().optional(),
      email: emailAddress().nullable().optional(),
      contactability: z.enum(CONTACTABILITY_CODES).default('contactable'),
      source: z.enum(INPUT_SOURCE_CODES).default('manual'),
      /** The integration's name; only (and then required) with `source: "integration"`. */
      source_label: labelText().min(1).max(100).optional(),
      tags: tags().optional(),
      attributes: attributes().optional(),
      timezone: TimeZoneName.nullable().optional(),
    })
    .superRefine((body, ctx) => {
      if (!body.phone && !body.email) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: 'a contact needs a phone number or an email address',
          input: body,
        });
      }
      if (body.source === 'integration' && body.source_label === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['source_label'],
          message: 'source_label (the integration’s name) is required with source "integration"',
          input: body.source_label,
        });
      }
      if (body.source !== 'integration' && body.source_label !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['source_label'],
          message:
            'source_label is given only with source "integration" (other sources have their own label)',
          input: body.source_label,
        });
      }
    })
    .meta({
      examples: [
        {
          first_name: 'Ana',
          last_name: 'Silva',
          phone: '+61491570156',
          email: 'ana.silva@example.com',
          tags: ['buyer'],
          attributes: { suburb: 'Fremantle' },
          timezone: 'Australia/Perth',
        },
      ],
    }),
);
/** What createContact and mergeContact take (the body of `POST …/contacts`). */
export type ContactInput = z.input<typeof CreateContactBody>;
export type CreateContactBody = z.infer<typeof CreateContactBody>;

/** Every field optional; `phone`, `email` and `timezone` take null to remove them. */
export const UpdateContactBody = schemaOnFirstUse(() =>
  z.strictObject({
    first_name: personName().optional(),
    last_name: personName().optional(),
    phone: phone().nullable().optional(),
    email: emailAddress().nullable().optional(),
    contactability: z.enum(CONTACTABILITY_CODES).optional(),
    /** Replaces the tags. */
    tags: tags().optional(),
    /** Merged into the attributes: null removes a key. */
    attributes: attributesPatch().optional(),
    timezone: TimeZoneName.nullable().optional(),
  }),
);
export type UpdateContactBody = z.infer<typeof UpdateContactBody>;

export const ContactListQuery = schemaOnFirstUse(() =>
  ListQuery.extend({
    limit: z.coerce.number().int().min(1).max(CONTACT_PAGE_SIZE).default(CONTACT_PAGE_SIZE),
    /** A prefix of the first, last or full name, the email address or the phone number (E.164 or digits). */
    q: z.string().trim().min(1).max(100).optional(),
    contactability: z.enum(CONTACTABILITY_CODES).optional(),
    source: z.enum(SOURCE_CODES).optional(),
    /** Contacts with this tag (ignoring case). */
    tag: z.string().trim().min(1).max(MAX_TAG_LENGTH).optional(),
  }),
);
export type ContactListQuery = z.infer<typeof ContactListQuery>;

const noteText = () => freeText().trim().min(1).max(MAX_NOTE_LENGTH);

export const CreateNoteBody = schemaOnFirstUse(() =>
  z.strictObject({
    text: noteText(),
    channel: z.enum(NOTE_CHANNELS).default('direct'),
  }),
);
export type CreateNoteBody = z.infer<typeof CreateNoteBody>;

export const UpdateNoteBody = schemaOnFirstUse(() =>
  z.strictObject({
    text: noteText().optional(),
    channel: z.enum(NOTE_CHANNELS).optional(),
  }),
);
export type UpdateNoteBody = z.infer<typeof UpdateNoteBody>;

/** The body of `PUT …/suppression-list/{phone}` (optional). */
export const PutSuppressionBody = schemaOnFirstUse(() =>
  z.strictObject({ reason: freeText().trim().max(200).nullable().optional() }).optional(),
);
export type PutSuppressionBody = z.infer<typeof PutSuppressionBody>;

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────

export const ContactResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    /** E.164. */
    phone: z.string().nullable(),
    email: z.string().nullable(),
    contactability: z.enum(CONTACTABILITY_CODES),
    /** `call`: made by the post-call pipeline from a call. */
    source: z.enum(SOURCE_CODES),
    /** "Manual", "CSV", "SMS Upload", "Phone / Device", "VCF Upload", "Call", or the integration's name. */
    source_label: z.string(),
    tags: z.array(z.string()),
    attributes: z.record(z.string(), z.string()),
    timezone: z.string().nullable(),
    last_contacted_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
/**
 * A page reads at most a bounded number of index entries (functions/contacts/list.ts): with
 * filters it can hold fewer than `limit` contacts, even none, while `next_cursor` is not null. The
 * list has ended only when `next_cursor` is null.
 */
export const ContactList = pageOf(ContactResponse);

export const NoteResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    text: z.string(),
    channel: z.enum(NOTE_CHANNELS),
    /** Inbound call, Outbound call, Campaign, Post-call, Direct. */
    channel_label: z.string(),
    /** `usr_…`, `key_…`, or `system` for a note the post-call pipeline wrote. */
    author_id: z.string(),
    /** The call a post-call note is about. */
    call_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const NoteList = pageOf(NoteResponse);

export const SuppressionResponse = schemaOnFirstUse(() =>
  z.object({
    /** E.164. */
    phone: z.string(),
    reason: z.string().nullable(),
    created_at: z.string(),
  }),
);
export const SuppressionList = pageOf(SuppressionResponse);

// ── Imports ─────────────────────────────────────────────────────────────────────────────────────────

export const IMPORT_FORMATS = ['csv', 'vcf'] as const;

/** `POST …/contacts/imports` as JSON: the job, and a URL to upload the file to. */
export const CreateImportBody = schemaOnFirstUse(() =>
  z.strictObject({
    format: z.enum(IMPORT_FORMATS),
    file_name: labelText().min(1).max(255).optional(),
  }),
);

export const ImportErrorItem = schemaOnFirstUse(() =>
  z.object({ row: z.number().int(), reason: z.string() }),
);

const importFields = () => ({
  id: z.string(),
  job_id: z.string(),
  workspace_id: z.string(),
  format: z.enum(IMPORT_FORMATS),
  file_name: z.string().nullable(),
  /** `pending`: waiting for the upload and `…/start`. */
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  /** Rows counted (`done`) of the file's rows (`total`; 0 until the file is read). */
  progress: z.object({ done: z.number().int(), total: z.number().int() }),
  counts: z.object({
    total: z.number().int(),
    created: z.number().int(),
    merged: z.number().int(),
    rejected: z.number().int(),
  }),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});

export const ImportSummary = schemaOnFirstUse(() => z.object(importFields()));
export const ImportResponse = schemaOnFirstUse(() =>
  z.object({
    ...importFields(),
    /** The first 100 rejected rows, by row number (data rows from 1, the header not counted). */
    errors: z.array(ImportErrorItem),
    /**
     * The first 100 rows imported with a change the file did not ask for, by row number: a phone
     * number (or email address) that was not valid, dropped because the other one was.
     */
    warnings: z.array(ImportErrorItem),
  }),
);
export const CreatedImportResponse = schemaOnFirstUse(() =>
  z.object({
    ...importFields(),
    /** A presigned PUT URL for the file (one hour); absent when the file was the request's body. */
    upload_url: z.string().optional(),
  }),
);
export const ImportList = pageOf(ImportSummary);
export const ImportListQuery = ListQuery;

/** 409 of a create or change whose phone or email belongs to another contact: that contact's id. */
export const DuplicateContactBody = schemaOnFirstUse(() =>
  z.object({
    error: z.string().meta({ examples: ['A contact with this phone number or email already exists'] }),
    contact_id: z.string().meta({ examples: ['ct_01JD8X3T6QW5R2K9M4N7P1B3C5'] }),
  }),
);
