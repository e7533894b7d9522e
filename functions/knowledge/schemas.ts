import * as z from 'zod';
import { freeText, labelText } from '../platform/validation.js';
import { ListQuery, pageOf } from '../platform/pagination.js';
import {
  DOCUMENT_CONTENT_TYPES,
  type DocumentContentType,
  ITEM_STATUSES,
  KNOWLEDGE_BASE_KINDS,
  LISTING_STATUSES,
  MAX_DOCUMENT_TEXT,
  MAX_QUERY_LENGTH,
} from './model.js';
import { schemaOnFirstUse } from '../platform/first-use.js';
import { documentedAs } from '../platform/documentation.js';

/**
 * Request and response shapes of the knowledge-base routes. Bodies are strict (an unknown field is
 * 422 `extra_forbidden`). An item's body depends on its base's kind: the route takes a JSON object
 * and the service checks it against `ListingBody` or `DocumentBody`.
 */

const name = () => labelText().min(1).max(200);
const shortText = (max: number) => z.string().trim().min(1).max(max);

export const CreateKnowledgeBaseBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: name(),
    kind: z.enum(KNOWLEDGE_BASE_KINDS),
  }),
);
export const UpdateKnowledgeBaseBody = schemaOnFirstUse(() => z.strictObject({ name: name() }));

export const KnowledgeBaseResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    kind: z.enum(KNOWLEDGE_BASE_KINDS),
    /** Items counted by the last index build (the search index follows writes within moments). */
    item_count: z.number(),
    integration_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const KnowledgeBaseList = pageOf(KnowledgeBaseResponse);

const count = () => z.number().int().min(0).max(100);

/** A listing (a base of kind `listings`). */
export const ListingBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      external_id: shortText(200).optional(),
      address: shortText(300),
      suburb: shortText(100).optional(),
      state: shortText(50).optional(),
      postcode: shortText(20).optional(),
      price_text: shortText(100).optional(),
      status: z.enum(LISTING_STATUSES),
      bedrooms: count().optional(),
      bathrooms: count().optional(),
      description: freeText().trim().max(20_000).optional(),
    })
    .meta({ title: 'A listing (a knowledge base of kind listings)' }),
);
export type ListingBody = z.infer<typeof ListingBody>;

/** A listing's change: the fields given are set; null removes an optional one. */
export const ListingPatch = schemaOnFirstUse(() =>
  z
    .strictObject({
      address: shortText(300).optional(),
      suburb: shortText(100).nullable().optional(),
      state: shortText(50).nullable().optional(),
      postcode: shortText(20).nullable().optional(),
      price_text: shortText(100).nullable().optional(),
      status: z.enum(LISTING_STATUSES).optional(),
      bedrooms: count().nullable().optional(),
      bathrooms: count().nullable().optional(),
      description: freeText().trim().max(20_000).nullable().optional(),
    })
    .meta({ title: "A listing's change" }),
);
export type ListingPatch = z.infer<typeof ListingPatch>;

/**
 * A document (a base of kind `documents`): its text (`{title, text}`), or a file to upload
 * (`{title, file_name, content_type}` → `upload_url`, a presigned PUT).
 */
export const DocumentBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      title: shortText(300),
      text: z.string().min(1).max(MAX_DOCUMENT_TEXT).optional(),
      file_name: shortText(255).optional(),
      content_type: z
        .string()
        .trim()
        .toLowerCase()
        .transform((value) => value.split(';')[0].trim())
        .refine((value) => (DOCUMENT_CONTENT_TYPES as string[]).includes(value), {
          message: `unsupported type: PDF, DOCX, TXT or Markdown (${DOCUMENT_CONTENT_TYPES.join(', ')})`,
        })
        .transform((value) => value as DocumentContentType)
        .optional(),
    })
    .superRefine((body, ctx) => {
      const file = body.file_name !== undefined || body.content_type !== undefined;
      if (body.text !== undefined && file) {
        ctx.addIssue({
          code: 'custom',
          path: ['text'],
          message: 'give either text, or file_name and content_type (a file to upload), not both',
          input: body.text,
        });
      } else if (body.text === undefined && !file) {
        ctx.addIssue({
          code: 'custom',
          path: ['text'],
          message: 'text is required, or file_name and content_type for a file to upload',
          input: undefined,
        });
      } else if (file && (body.file_name === undefined || body.content_type === undefined)) {
        const missing = body.file_name === undefined ? 'file_name' : 'content_type';
        ctx.addIssue({
          code: 'custom',
          path: [missing],
          message: `${missing} is required with a file to upload`,
          input: undefined,
        });
      }
    })
    .meta({ title: 'A document (a knowledge base of kind documents): its text, or a file to upload' }),
);
export type DocumentBody = z.infer<typeof DocumentBody>;
export const DocumentPatch = schemaOnFirstUse(() =>
  z.strictObject({ title: shortText(300) }).meta({ title: "A document's change" }),
);

/** The route's body: a listing or a document, by the base's kind (checked by the service). */
export const CreateItemBody = schemaOnFirstUse(() =>
  z.record(z.string(), z.unknown()).register(documentedAs, { oneOf: () => [ListingBody, DocumentBody] }),
);
/** A change: a listing's or a document's, by the item's type (checked by the service). */
export const UpdateItemBody = schemaOnFirstUse(() =>
  z.record(z.string(), z.unknown()).register(documentedAs, { oneOf: () => [ListingPatch, DocumentPatch] }),
);

export const ItemResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    knowledge_base_id: z.string(),
    type: z.enum(['listing', 'document']),
    // listings
    external_id: z.string().nullable().optional(),
    address: z.string().optional(),
    suburb: z.string().nullable().optional(),
    state: z.string().nullable().optional(),
    postcode: z.string().nullable().optional(),
    /** "address, suburb state postcode" */
    full_address: z.string().optional(),
    price_text: z.string().nullable().optional(),
    bedrooms: z.number().nullable().optional(),
    bathrooms: z.number().nullable().optional(),
    description: z.string().nullable().optional(),
    /** A listing: available, under_offer or sold; a document: processing, ready or failed. */
    status: z.enum([...LISTING_STATUSES, ...ITEM_STATUSES]),
    // documents
    title: z.string().optional(),
    file_name: z.string().nullable().optional(),
    content_type: z.string().nullable().optional(),
    size_bytes: z.number().nullable().optional(),
    chunks: z.number().nullable().optional(),
    failure_reason: z.string().nullable().optional(),
    truncated: z.boolean().optional(),
    /** Where to PUT the file (documents created with file_name and content_type; shown once). */
    upload_url: z.string().optional(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const ItemList = pageOf(ItemResponse);

export const ItemListQuery = ListQuery;

export const SearchQuery = schemaOnFirstUse(() =>
  z.strictObject({
    q: z
      .string()
      .trim()
      .min(1, { message: 'q is required: what to search for' })
      .max(MAX_QUERY_LENGTH, { message: `q is at most ${MAX_QUERY_LENGTH} characters` }),
    limit: z.coerce.number().int().min(1).max(50).default(10),
  }),
);

/** Ranked best first; one page (`next_cursor` is always null: ask for more with a larger `limit`). */
export const SearchResponse = schemaOnFirstUse(() =>
  z.object({
    next_cursor: z.null(),
    items: z.array(
      z.object({
        id: z.string(),
        item_id: z.string(),
        type: z.enum(['listing', 'document']),
        title: z.string(),
        score: z.number(),
        /** The passage that matched best (a listing's description or address; a document's passage). */
        passage: z.string(),
        listing: z
          .object({
            external_id: z.string().nullable(),
            full_address: z.string(),
            price_text: z.string().nullable(),
            status: z.enum(LISTING_STATUSES),
            bedrooms: z.number().nullable(),
            bathrooms: z.number().nullable(),
          })
          .optional(),
      }),
    ),
  }),
);

/** 409 of a listing whose external_id the base has already: that listing's id. */
export const DuplicateListingBody = schemaOnFirstUse(() =>
  z.object({
    error: z.string().meta({ examples: ['A listing with this external_id already exists'] }),
    item_id: z.string().meta({ examples: ['kbi_01JD8X3T6QW5R2K9M4N7P1B3C5'] }),
  }),
);
