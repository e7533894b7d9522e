import { smsSegmentation } from '../../functions/billing/sms-segments.js';
import { partLimit, segmentsOf } from '../../web/src/components/sms-segments.js';

/** The SMS composer's counter counts as the API charges: the same rule, on the same inputs. */
describe('the composer’s segment counter', () => {
  const inputs: [what: string, text: string, encoding: 'GSM-7' | 'UCS-2', segments: number][] = [
    ['160 GSM-7 characters', 'a'.repeat(160), 'GSM-7', 1],
    ['161 GSM-7 characters', 'a'.repeat(161), 'GSM-7', 2],
    ['306 GSM-7 characters (two parts of 153)', 'b'.repeat(306), 'GSM-7', 2],
    ['307 GSM-7 characters', 'b'.repeat(307), 'GSM-7', 3],
    ['80 euro signs (extension characters count 2)', '€'.repeat(80), 'GSM-7', 1],
    ['81 euro signs', '€'.repeat(81), 'GSM-7', 2],
    ['braces and a tilde', `${'x'.repeat(157)}{}~`, 'GSM-7', 2],
    ['one emoji', '😀', 'UCS-2', 1],
    ['70 UCS-2 characters', `${'a'.repeat(69)}ć`, 'UCS-2', 1],
    ['71 UCS-2 characters', `${'a'.repeat(70)}ć`, 'UCS-2', 2],
    ['134 UCS-2 characters (two parts of 67)', `${'a'.repeat(133)}ć`, 'UCS-2', 2],
    ['135 UCS-2 characters', `${'a'.repeat(134)}ć`, 'UCS-2', 3],
  ];

  it.each(inputs)('%s: the same encoding and segments as the API', (_what, text, encoding, segments) => {
    const api = smsSegmentation(text);
    const composer = segmentsOf(text);
    expect(composer).toEqual(api);
    expect(composer).toMatchObject({ encoding, segments });
  });

  it('an empty message has no segments (the API refuses it)', () => {
    expect(segmentsOf('')).toEqual({ encoding: 'GSM-7', segments: 0, characters: 0 });
    expect(() => smsSegmentation('')).toThrow();
  });

  it('names the part size the counter shows', () => {
    expect(partLimit(segmentsOf('hi'))).toBe(160);
    expect(partLimit(segmentsOf('a'.repeat(161)))).toBe(153);
    expect(partLimit(segmentsOf('😀'))).toBe(70);
    expect(partLimit(segmentsOf(`${'a'.repeat(70)}ć`))).toBe(67);
  });
});
