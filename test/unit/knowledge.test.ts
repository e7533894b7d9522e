import { chunkText } from '../../functions/knowledge/extract.js';
import { sizeProblem } from '../../functions/knowledge/documents.js';
import { newIndex, rank } from '../../functions/knowledge/search-index.js';
import { listingItemId } from '../../functions/knowledge/service.js';
import { isId } from '../../functions/platform/ids.js';

/** The knowledge domain's pure parts: size checks, passages, the search ranking, listing ids. */

test('a file is refused when empty or over 50 MB', () => {
  expect(sizeProblem(0)).toBe('the file is empty (0 bytes)');
  expect(sizeProblem(1)).toBeUndefined();
  expect(sizeProblem(50 * 1024 * 1024)).toBeUndefined();
  expect(sizeProblem(60 * 1024 * 1024)).toBe('the file is larger than 50 MB (60.0 MB)');
});

test('text is cut into passages of at most 800 characters, paragraphs kept whole where they fit', () => {
  const long = 'A sentence about the garden. '.repeat(100);
  const chunks = chunkText(`Short one.\n\nShort two.\n\n${long}`);
  expect(chunks[0]).toBe('Short one.\nShort two.');
  expect(chunks.every((c) => c.length <= 800)).toBe(true);
  expect(chunks.join(' ').replace(/\s+/g, ' ')).toContain('A sentence about the garden.');
  expect(chunkText('  \n\n  ')).toEqual([]);
});

test('listing ids are derived from base and external id, shaped like any item id', () => {
  const a = listingItemId('kb_01J000000000000000000000AA', 'L-1');
  expect(isId('knowledgeItem', a)).toBe(true);
  expect(listingItemId('kb_01J000000000000000000000AA', 'L-1')).toBe(a);
  expect(listingItemId('kb_01J000000000000000000000AA', 'L-2')).not.toBe(a);
  expect(listingItemId('kb_01J000000000000000000000BB', 'L-1')).not.toBe(a);
});

test('search ranks items once each, best first, with a passage around the match', () => {
  const filler = 'Nothing to see here. '.repeat(40);
  const index = newIndex([
    {
      id: 'kbi_1#0',
      itemId: 'kbi_1',
      type: 'document',
      title: 'Rules',
      text: `${filler} Pets: one small dog allowed. ${filler}`,
    },
    { id: 'kbi_1#1', itemId: 'kbi_1', type: 'document', title: 'Rules', text: 'Dog owners pay a pet bond.' },
    { id: 'kbi_2', itemId: 'kbi_2', type: 'listing', title: '1 Dog Lane', text: 'A cottage.' },
    { id: 'kbi_3', itemId: 'kbi_3', type: 'listing', title: '5 Cat Street', text: 'A flat.' },
  ]);
  const hits = rank(index, 'dog', 10);
  expect(hits.map((h) => h.item_id).sort()).toEqual(['kbi_1', 'kbi_2']);
  const rules = hits.find((h) => h.item_id === 'kbi_1')!;
  expect(rules.passage.length).toBeLessThanOrEqual(302);
  expect(rules.passage.toLowerCase()).toContain('dog');
  expect(rank(index, 'cotage', 10)[0].item_id).toBe('kbi_2'); // fuzzy: one edit
  expect(rank(index, 'cott', 10)[0].item_id).toBe('kbi_2'); // prefix
});
