import { allDone, withToken, type Line } from '../../web/src/pages/agent/chat-lines.js';

/** The dashboard's test chat: how the relay's text frames build its lines. */
describe('withToken', () => {
  const stream = (frames: [string, boolean][], from: Line[] = []): Line[] =>
    frames.reduce((lines, [token, last]) => withToken(lines, token, last), from);

  it('streams a reply into one agent line, done at its last frame', () => {
    expect(
      stream([
        ['Hi, ', false],
        ['there.', false],
        ['', true],
      ]),
    ).toEqual([{ kind: 'agent', text: 'Hi, there.', done: true }]);
  });

  it('a tool used meanwhile (end_call) does not leave the reply streaming: its last frame still closes it', () => {
    const before = stream([['Thank you for calling. Goodbye!', false]]);
    const withTool: Line[] = [...before, { kind: 'tool', name: 'end_call', args: '{}', ok: true }];
    expect(withToken(withTool, '', true)).toEqual([
      { kind: 'agent', text: 'Thank you for calling. Goodbye!', done: true },
      { kind: 'tool', name: 'end_call', args: '{}', ok: true },
    ]);
  });

  it('the next reply is a line of its own; an empty reply adds none', () => {
    const first = stream([['One.', true]]);
    expect(stream([['Two.', true]], first)).toEqual([
      { kind: 'agent', text: 'One.', done: true },
      { kind: 'agent', text: 'Two.', done: true },
    ]);
    expect(stream([['', true]], first)).toEqual(first);
    expect(
      stream(
        [
          ['', false],
          ['', true],
        ],
        first,
      ),
    ).toEqual(first);
  });
});

describe('allDone', () => {
  it('the conversation ended: a reply whose last frame never came is no longer streaming', () => {
    const lines: Line[] = [
      { kind: 'user', text: 'Bye' },
      { kind: 'agent', text: 'Goodbye!', done: false },
    ];
    expect(allDone(lines)).toEqual([
      { kind: 'user', text: 'Bye' },
      { kind: 'agent', text: 'Goodbye!', done: true },
    ]);
  });
});
