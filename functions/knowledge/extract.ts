import { DOCUMENT_TYPES, type DocumentContentType } from './model.js';

/**
 * A document's text, by its type, with well-kept libraries loaded only when needed (they stay out of
 * every function but the worker's path): PDF with `unpdf` (pdf.js), DOCX with `mammoth`, TXT and
 * Markdown as they are (UTF-8, else Windows-1252). A file that cannot be read throws
 * `DocumentError` with the reason the item shows.
 */
export class DocumentError extends Error {
  override readonly name = 'DocumentError';
}

const startsWith = (bytes: Uint8Array, text: string) =>
  Buffer.from(bytes.subarray(0, text.length)).toString('latin1') === text;

export async function extractText(bytes: Uint8Array, contentType: DocumentContentType): Promise<string> {
  const kind = DOCUMENT_TYPES[contentType];
  if (kind === 'pdf') return pdfText(bytes);
  if (kind === 'docx') return docxText(bytes);
  return plainText(bytes);
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  // A PDF may have junk before its header (readers allow 1 KB); none at all is not a PDF.
  if (!Buffer.from(bytes.subarray(0, 1024)).toString('latin1').includes('%PDF-'))
    throw new DocumentError('the file is not a PDF (no %PDF- header): corrupt or of another type');
  const { getDocumentProxy, extractText: pdfExtract } = await import('unpdf');
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 } as never);
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    if (name === 'PasswordException')
      throw new DocumentError('the PDF is password-protected: upload it without a password');
    throw new DocumentError(`the PDF is corrupt and cannot be read (${shortMessage(error)})`);
  }
  try {
    const { text } = await pdfExtract(document, { mergePages: true });
    return text;
  } catch (error) {
    throw new DocumentError(`the PDF is corrupt and cannot be read (${shortMessage(error)})`);
  } finally {
    await document.destroy().catch(() => {
      // Frees pdf.js's memory only: the text (or the error above) is the result either way.
    });
  }
}

async function docxText(bytes: Uint8Array): Promise<string> {
  if (!startsWith(bytes, 'PK'))
    throw new DocumentError(
      'the file is not a DOCX document (not a ZIP package): corrupt or of another type',
    );
  const mammoth = await import('mammoth');
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
    return value;
  } catch (error) {
    throw new DocumentError(`the DOCX document is corrupt and cannot be read (${shortMessage(error)})`);
  }
}

function plainText(bytes: Uint8Array): string {
  if (bytes.includes(0)) throw new DocumentError('the file is not text (it has binary content)');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

const shortMessage = (error: unknown) =>
  String((error as Error)?.message ?? error)
    .replace(/\s+/g, ' ')
    .slice(0, 160);

/** Passages of about `size` characters: paragraphs kept whole where they fit, long ones cut at sentences. */
export function chunkText(text: string, size = 800): string[] {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const pieces: string[] = [];
  for (const paragraph of paragraphs) {
    if (paragraph.length <= size) {
      pieces.push(paragraph);
      continue;
    }
    let rest = paragraph;
    while (rest.length > size) {
      const window = rest.slice(0, size);
      const cut = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
      const at =
        cut > size / 2 ? cut + 1 : window.lastIndexOf(' ') > size / 2 ? window.lastIndexOf(' ') : size;
      pieces.push(rest.slice(0, at).trim());
      rest = rest.slice(at).trim();
    }
    if (rest) pieces.push(rest);
  }
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (current && current.length + 1 + piece.length > size) {
      chunks.push(current);
      current = piece;
    } else current = current ? `${current}\n${piece}` : piece;
  }
  if (current) chunks.push(current);
  return chunks;
}
