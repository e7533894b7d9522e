import { clock } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { sendMessage } from '../platform/queue.js';
import { BUCKET } from '../platform/resources.js';
import { getObject, objectSize, putObject, signedUploadUrl } from '../platform/storage.js';
import { isConditionFailure } from '../platform/table.js';
import { KnowledgeItemEntity, type KnowledgeBase, type KnowledgeItem } from './entities.js';
import { DocumentError, chunkText, extractText } from './extract.js';
import { MAX_DOCUMENT_BYTES, MAX_EXTRACTED_CHARS, type DocumentContentType } from './model.js';
import type { DocumentBody } from './schemas.js';
import { getItem, touchBase } from './service.js';

/**
 * Documents: text posted as it is, or a file uploaded to a presigned PUT URL (PDF, DOCX, TXT,
 * Markdown; up to 50 MB). Either way the item is `processing` and a `knowledge.document` message
 * goes to the worker, which:
 * 1. waits for the upload: while the file is not in the bucket the message is sent again with a
 *    growing delay (1 s, 2 s, 4 s … 60 s); after the upload URL's hour the item fails;
 * 2. refuses an empty file or one over 50 MB, reads the text by the declared type (extract.ts:
 *    corrupt and password-protected PDFs, corrupt DOCX, binary "text" fail with their reason), and
 *    fails a file with no text;
 * 3. cuts the text into passages (JSON in the bucket beside the file), records them on the item
 *    (`extractedAt`, conditioned on the item still processing) and raises the base's version;
 * 4. the index build (search-index.ts) then puts the passages in the index and marks the item
 *    `ready`: a ready document is searchable.
 * Every step is safe to repeat: a redelivered message finds the item extracted, or failed, and stops.
 */

export const UPLOAD_URL_SECONDS = 3600;
/** A file not uploaded by then fails (the URL has expired). */
const UPLOAD_WAIT_MS = (UPLOAD_URL_SECONDS + 300) * 1000;

const fileKeyOf = (kb: KnowledgeBase, itemId: string) =>
  `${BUCKET.uploadsPrefix}knowledge/${kb.workspaceId}/${kb.knowledgeBaseId}/files/${itemId}`;

const sendProcess = (
  item: Pick<KnowledgeItem, 'workspaceId' | 'knowledgeBaseId' | 'itemId'>,
  delaySeconds = 0,
) =>
  sendMessage(
    'knowledge',
    {
      type: 'knowledge.document',
      workspace_id: item.workspaceId,
      knowledge_base_id: item.knowledgeBaseId,
      item_id: item.itemId,
    },
    { delaySeconds },
  );

/** A new document item, processing; with `uploadUrl` when the file is to be uploaded. */
export async function createDocument(
  kb: KnowledgeBase,
  body: DocumentBody,
): Promise<{ item: KnowledgeItem; uploadUrl?: string }> {
  const itemId = newId('knowledgeItem');
  const objectKey = fileKeyOf(kb, itemId);
  const now = clock.now().toISOString();
  const text = body.text;
  if (text !== undefined) await putObject(objectKey, text, 'text/plain; charset=utf-8');
  const { data } = await KnowledgeItemEntity.create({
    workspaceId: kb.workspaceId,
    knowledgeBaseId: kb.knowledgeBaseId,
    itemId,
    type: 'document',
    title: body.title,
    ...(text !== undefined
      ? { contentType: 'text/plain', sizeBytes: Buffer.byteLength(text, 'utf8') }
      : { fileName: body.file_name, contentType: body.content_type }),
    objectKey,
    status: 'processing',
    createdAt: now,
    updatedAt: now,
  }).go();
  const item = data as KnowledgeItem;
  await sendProcess(item, text !== undefined ? 0 : 1);
  return {
    item,
    ...(text === undefined ? { uploadUrl: await signedUploadUrl(objectKey, UPLOAD_URL_SECONDS) } : {}),
  };
}

async function failDocument(item: KnowledgeItem, reason: string): Promise<string> {
  try {
    await KnowledgeItemEntity.patch({
      workspaceId: item.workspaceId,
      knowledgeBaseId: item.knowledgeBaseId,
      itemId: item.itemId,
    })
      .set({ status: 'failed', failureReason: reason, updatedAt: clock.now().toISOString() })
      .where((attr, op) => `${op.eq(attr.status, 'processing')} AND ${op.notExists(attr.extractedAt)}`)
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  return `failed: ${reason}`;
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** Why a file of this size is refused, if it is: empty, or over 50 MB. */
export function sizeProblem(size: number): string | undefined {
  if (size === 0) return 'the file is empty (0 bytes)';
  if (size > MAX_DOCUMENT_BYTES) return `the file is larger than 50 MB (${megabytes(size)})`;
  return undefined;
}

/** The worker's step for one document (see above). Returns what it did, for the log. */
export async function processDocument(
  workspaceId: string,
  knowledgeBaseId: string,
  itemId: string,
): Promise<string> {
  const item = await getItem(workspaceId, knowledgeBaseId, itemId);
  if (!item || item.type !== 'document') return 'no such document';
  if (item.status !== 'processing') return `already ${item.status}`;
  if (item.extractedAt) {
    await touchBase(workspaceId, knowledgeBaseId); // the index build may have been lost
    return 'extracted already: index build asked again';
  }
  const key = item.objectKey!;
  const size = await objectSize(key);
  if (size === undefined) {
    if (clock.now().getTime() - Date.parse(item.createdAt) > UPLOAD_WAIT_MS)
      return failDocument(item, 'the file was not uploaded within an hour (upload_url has expired)');
    const checks = (item.uploadChecks ?? 0) + 1;
    await KnowledgeItemEntity.patch({ workspaceId, knowledgeBaseId, itemId })
      .set({ uploadChecks: checks })
      .go();
    await sendProcess(item, Math.min(60, 2 ** Math.min(checks - 1, 6)));
    return `waiting for the upload (check ${checks})`;
  }
  const problem = sizeProblem(size);
  if (problem) return failDocument(item, problem);
  const bytes = await getObject(key);
  if (!bytes) return failDocument(item, 'the uploaded file is gone');
  let text: string;
  try {
    text = await extractText(bytes, item.contentType as DocumentContentType);
  } catch (error) {
    if (error instanceof DocumentError) return failDocument(item, error.message);
    throw error;
  }
  const truncated = text.length > MAX_EXTRACTED_CHARS;
  const chunks = chunkText(truncated ? text.slice(0, MAX_EXTRACTED_CHARS) : text);
  if (chunks.length === 0)
    return failDocument(item, 'no text found in the file (a scanned document without a text layer?)');
  const chunksKey = `${key}.passages.json`;
  await putObject(chunksKey, JSON.stringify({ chunks }), 'application/json');
  try {
    await KnowledgeItemEntity.patch({ workspaceId, knowledgeBaseId, itemId })
      .set({
        sizeBytes: size,
        chunkCount: chunks.length,
        chunksKey,
        textLength: Math.min(text.length, MAX_EXTRACTED_CHARS),
        truncated,
        extractedAt: clock.now().toISOString(),
        updatedAt: clock.now().toISOString(),
      })
      .where((attr, op) => op.eq(attr.status, 'processing'))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) return 'no longer processing';
    throw error;
  }
  await touchBase(workspaceId, knowledgeBaseId);
  return `extracted ${chunks.length} passages`;
}
