import { referencedParameters, renderTemplate } from '../../functions/agents/template.js';
import { renderTemplate as renderSmsTemplate } from '../../functions/post-call/analysis.js';

/** The one `{{name}}` renderer: prompts and greetings, and the post-call SMS templates. */
describe('template renderer', () => {
  it('is the same renderer for prompts and post-call SMS templates', () => {
    expect(renderSmsTemplate).toBe(renderTemplate);
  });

  it.each(['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'])(
    '{{%s}} renders nothing: no inherited property leaks into the text',
    (name) => {
      expect(renderTemplate(`Hi {{${name}}} there`, {})).toBe('Hi there');
      expect(renderTemplate(`{{ ${name} }}`, { name: 'Sam' })).toBe('');
    },
  );

  it('reads only own values, never what the values object inherits', () => {
    const values = Object.create({ inherited: 'from the prototype' }) as Record<string, string>;
    values.own = 'mine';
    expect(renderTemplate('{{own}} {{inherited}}', values)).toBe('mine ');
  });

  it('an own value of any name is used, even one named like a prototype property', () => {
    const values = JSON.parse('{"constructor":"C","__proto__":"P","toString":"T"}') as Record<string, string>;
    expect(renderTemplate('{{constructor}}/{{__proto__}}/{{toString}}', values)).toBe('C/P/T');
  });

  it('fills known references and drops unknown or undefined ones', () => {
    expect(
      renderTemplate('Hi {{ name }}, {{agent_name}} here.{{missing}}', { name: 'Sam', agent_name: 'Riley' }),
    ).toBe('Hi Sam, Riley here.');
    expect(renderTemplate('Hi {{name}}!', { name: undefined })).toBe('Hi!');
    expect(
      renderTemplate('{{listing-id}} {{a.b}} {{1st}}', { 'listing-id': 'L1', 'a.b': 'x', '1st': 'y' }),
    ).toBe('L1 x y');
    expect(referencedParameters('{{a}} {{b}} {{a}} {{ c.d }}')).toEqual(['a', 'b', 'c.d']);
  });
});
