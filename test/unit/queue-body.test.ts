import { queueBody } from '../../functions/platform/queue.js';

/** Queue bodies are ASCII whatever the text (functions/platform/queue.ts), and read back as sent. */
describe('queueBody', () => {
  const message = {
    type: 'workspace.event',
    text: 'Zoë 🏡 — Yes 👍 call me\t\n\u0000\u202e',
    lone: '\ud83d',
    nested: [{ name: '日本語' }],
  };

  it('writes only printable ASCII', () => {
    expect(queueBody(message)).toMatch(/^[\x20-\x7e]*$/);
  });

  it('reads back as the same value', () => {
    expect(JSON.parse(queueBody(message))).toEqual(message);
  });

  it('leaves ASCII as JSON.stringify writes it', () => {
    const ascii = { type: 'call.dispatch', call_id: 'call_1', note: 'a "quoted" \\ path' };
    expect(queueBody(ascii)).toBe(JSON.stringify(ascii));
  });
});
