import * as z from 'zod';
import { ValidationError } from '../../functions/platform/errors.js';
import {
  asciiEmail,
  emailAddress,
  freeText,
  labelText,
  parseOrThrow,
  textProblem,
} from '../../functions/platform/validation.js';
import { StartCallBody } from '../../functions/calling/schemas.js';
import { rowParameterProblem } from '../../functions/campaigns/uploads.js';

/** The text rules every domain's schemas share (functions/platform/validation.ts). */
describe('labels and free text', () => {
  const labels = z.strictObject({
    name: labelText().min(1).max(100),
    note: freeText().trim().max(500).optional(),
  });
  const detail = (body: unknown) => {
    try {
      parseOrThrow(labels, body, 'body');
    } catch (error) {
      if (error instanceof ValidationError) return error.detail;
      throw error;
    }
    return [];
  };

  it.each([
    ['NUL', 'Zo\u0000e', 'U+0000'],
    ['a tab', 'Zoe\tNg', 'U+0009'],
    ['a newline', 'Zoe\nNg', 'U+000A'],
    ['DEL', 'Zoe\u007f', 'U+007F'],
    ['a C1 control', 'Zoe\u0085', 'U+0085'],
  ])('refuses %s in a label (422 value_error on the field)', (_what, name, found) => {
    expect(detail({ name })).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'name'],
        msg: `Value error, must be one line without control characters (found ${found})`,
        input: name,
      },
    ]);
  });

  it.each(['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'])(
    'refuses the bidirectional control %j in a label',
    (bidi) => {
      const [issue] = detail({ name: `invoice${bidi}fdp.exe` });
      expect(issue).toMatchObject({ type: 'value_error', loc: ['body', 'name'] });
      expect(issue.msg).toMatch(/bidirectional control characters \(found U\+20[26][0-9A-F]\)/);
    },
  );

  it('takes any other Unicode in a label: accents, emoji, right-to-left scripts', () => {
    for (const name of ['Zoë 🏡', 'שלום', 'مرحبا', '日本語', 'O\u2019Brien'])
      expect(detail({ name })).toEqual([]);
  });

  it('takes tab and line breaks in free text, and bidirectional controls; refuses NUL and other controls', () => {
    expect(detail({ name: 'a', note: 'line one\r\n\tline two \u202bعربي\u202c' })).toEqual([]);
    expect(detail({ name: 'a', note: 'bad\u0000' })[0]).toMatchObject({
      loc: ['body', 'note'],
      msg: 'Value error, must not contain control characters other than tab and line breaks (found U+0000)',
    });
    expect(textProblem('\u001b[31mred', 'free')).toMatch(/U\+001B/);
  });
});

describe('record keys', () => {
  it("report a key's own problem on the key, as for a field", () => {
    const attributes = z.strictObject({ attributes: z.record(labelText().min(1).max(5), z.string()) });
    const problems = (body: unknown) => {
      try {
        parseOrThrow(attributes, body, 'body');
        return [];
      } catch (error) {
        return (error as ValidationError).detail;
      }
    };
    expect(problems({ attributes: { 'a\u202eb': 'x' } })).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'attributes', 'a\u202eb'],
        msg: 'Value error, must not contain bidirectional control characters (found U+202E)',
        input: 'a\u202eb',
      },
    ]);
    expect(problems({ attributes: { toolong: 'x' } })).toEqual([
      expect.objectContaining({
        type: 'string_too_long',
        loc: ['body', 'attributes', 'toolong'],
        input: 'toolong',
      }),
    ]);
  });
});

describe('e-mail addresses (the provider sends to 7-bit ASCII addresses only)', () => {
  it('keeps an internationalised domain in its ASCII (Punycode) form, lower case', () => {
    expect(emailAddress().parse(' Zoe@Exämple.com ')).toBe('zoe@xn--exmple-cua.com');
    expect(asciiEmail('zoe@xn--exmple-cua.com')).toEqual({ ok: true, email: 'zoe@xn--exmple-cua.com' });
  });

  it('refuses a non-ASCII local part with the reason', () => {
    const result = emailAddress().safeParse('zoë@exämple.com');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].message).toBe(
      'the part before @ must be ASCII: our e-mail provider cannot send to internationalised (SMTPUTF8) addresses',
    );
  });

  it('still refuses what is not an address', () => {
    for (const value of ['zoe', 'zoe@', '@example.com', 'zoe@exa mple.com', 'zoe@@example.com']) {
      expect(emailAddress().safeParse(value).success).toBe(false);
    }
  });
});

describe("a call's parameters (start-call, campaign rows)", () => {
  const problems = (parameters: unknown) => {
    try {
      parseOrThrow(StartCallBody, { to_phone: '+61491570156', parameters }, 'body');
      return [];
    } catch (error) {
      if (error instanceof ValidationError) return error.detail;
      throw error;
    }
  };

  it.each([
    ['NUL', 'a\u0000b', /U\+0000/],
    ['an escape', '\u001b[31m', /U\+001B/],
    [
      'a bidirectional override',
      'invoice\u202efdp.exe',
      /bidirectional control characters \(found U\+202E\)/,
    ],
    ['an isolate', 'a\u2066b', /U\+2066/],
    ['a lone high surrogate', 'a\ud800b', /lone surrogate U\+D800/],
    ['a lone low surrogate', '\udc00', /lone surrogate U\+DC00/],
  ])('refuses %s in a value (422 value_error on the parameter)', (_what, value, msg) => {
    const [issue] = problems({ first_name: value });
    expect(issue).toMatchObject({ type: 'value_error', loc: ['body', 'parameters', 'first_name'] });
    expect(issue.msg).toMatch(msg);
  });

  it('takes tab, line breaks, emoji and right-to-left text in a value', () => {
    expect(problems({ note: 'line one\r\n\tline two', who: 'Zoë 🏡', rtl: 'שלום' })).toEqual([]);
  });

  it('refuses a control character in a name', () => {
    expect(problems({ 'first\nname': 'Zoe' })[0]).toMatchObject({
      type: 'value_error',
      loc: ['body', 'parameters', 'first\nname'],
    });
  });

  it("refuses a campaign row whose own values are not a parameter's text, naming the column", () => {
    expect(
      rowParameterProblem({ row: 2, fields: { phone: '0491570156', first_name: 'Zoe' } }),
    ).toBeUndefined();
    expect(
      rowParameterProblem({ row: 2, fields: { phone: '0491570156', attributes: { listing: 'a\u202eb' } } }),
    ).toBe('column "listing" must not contain bidirectional control characters (found U+202E)');
    expect(rowParameterProblem({ row: 3, fields: { first_name: 'Zo\u0000e' } })).toMatch(
      /^column "first_name" must not contain control characters/,
    );
  });

  it('no text of any kind takes a lone surrogate; a pair is a character', () => {
    expect(textProblem('a\ud83d', 'label')).toMatch(/lone surrogate U\+D83D/);
    expect(textProblem('a\ude00', 'free')).toMatch(/lone surrogate U\+DE00/);
    expect(textProblem('a\ud83d\ude00', 'free')).toBeUndefined();
  });
});
