/**
 * The values knowledge bases and their items take, apart from the entities (the route declarations
 * import these, and the catalog imports the routes: nothing here may build an ElectroDB entity).
 */

export const KNOWLEDGE_BASE_KINDS = ['listings', 'documents'] as const;
export type KnowledgeBaseKind = (typeof KNOWLEDGE_BASE_KINDS)[number];

export const LISTING_STATUSES = ['available', 'under_offer', 'sold'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

export const ITEM_STATUSES = ['processing', 'ready', 'failed'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

/** The document types a worker reads: content type → what it is. */
export const DOCUMENT_TYPES = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/plain': 'text',
  'text/markdown': 'text',
  'text/x-markdown': 'text',
} as const;
export type DocumentContentType = keyof typeof DOCUMENT_TYPES;
export const DOCUMENT_CONTENT_TYPES = Object.keys(DOCUMENT_TYPES) as DocumentContentType[];

/** Uploads (presigned PUT) up to 50 MB; a larger file fails with a reason. */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;
/** `{title, text}` documents: up to 1 MB of text in the request. */
export const MAX_DOCUMENT_TEXT = 1_000_000;
/** Extracted text kept per document (characters); the rest is cut and the item says so. */
export const MAX_EXTRACTED_CHARS = 2_000_000;
/** A search query: 1–1,000 characters (a caller's question, not a document). */
export const MAX_QUERY_LENGTH = 1000;
