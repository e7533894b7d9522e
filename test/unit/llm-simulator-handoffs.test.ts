import type { ChatCompletionRequest, ChatTool } from '../../lib/local/simulators/llm/protocol.js';
import {
  HANDOFF_FAILED_REPLY,
  handoffTargets,
  requestedTarget,
} from '../../lib/local/simulators/llm/handoffs.js';
import { GOODBYE_REPLY, simulateReply, TRANSFER_REPLY } from '../../lib/local/simulators/llm/replies.js';

/**
 * The model simulator's rules for agents that hand off (lib/local/simulators/llm/handoffs.ts,
 * docs/language-model.md): hand over when the caller names a target or asks for one in words of its
 * description; introduce the agent taking over with the caller's last line in hand.
 */

const SALES = 'agent_01SALES000000000000000000';
const MAINT = 'agent_01MAINT000000000000000000';

/** `handoff_to_agent` as the conversation engine offers it (conversation/engine/handoff.ts). */
function handoffTool(targets: { id: string; name: string; description: string }[]): ChatTool {
  return {
    type: 'function',
    function: {
      name: 'handoff_to_agent',
      description: [
        'Hand the caller over to another agent of this business, in this same call. The agents:',
        ...targets.map((t) => `- ${t.id} (${t.name}): ${t.description}`),
      ].join('\n'),
      parameters: {
        type: 'object',
        properties: {
          agent_id: { type: 'string', enum: targets.map((t) => t.id) },
          reason: { type: 'string' },
          summary: { type: 'string' },
        },
        required: ['agent_id', 'reason', 'summary'],
      },
    },
  };
}

const tool = (name: string): ChatTool => ({
  type: 'function',
  function: { name, parameters: { type: 'object' } },
});

const TARGETS = [
  {
    id: SALES,
    name: 'Sales',
    description: "The caller wants to buy, or asks about a listing's price or sale, or asks for sales",
  },
  {
    id: MAINT,
    name: 'Maintenance Desk',
    description: 'A tenant reports a repair, a leak or a broken appliance',
  },
];
const TOOLS = [tool('end_call'), tool('transfer_call'), tool('search_knowledge'), handoffTool(TARGETS)];

const ask = (
  line: string,
  tools: ChatTool[] = TOOLS,
  system = 'You are the receptionist.',
): ChatCompletionRequest => ({
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: line },
  ],
  tools,
});

describe('handing over', () => {
  test('the targets are read from the tool, as listed, and only those its enum allows', () => {
    expect(handoffTargets(ask('hi')).map((t) => [t.agentId, t.name])).toEqual([
      [SALES, 'Sales'],
      [MAINT, 'Maintenance Desk'],
    ]);
    const narrowed = handoffTool(TARGETS);
    (
      narrowed.function.parameters as { properties: { agent_id: { enum: string[] } } }
    ).properties.agent_id.enum = [MAINT];
    expect(handoffTargets(ask('hi', [narrowed])).map((t) => t.agentId)).toEqual([MAINT]);
    expect(handoffTargets(ask('hi', [tool('end_call')]))).toEqual([]);
  });

  test.each([
    // asked for in words of the description ("sales" ~ "sale", "listing")
    ["I'd like to speak to sales about a listing", SALES, 'Sales'],
    // the target's name, anywhere in the line, any case
    ['Could I get the maintenance desk?', MAINT, 'Maintenance Desk'],
    ['is SALES around', SALES, 'Sales'],
    // asked to be put through, a word of the second target's description
    ['Please put me through to someone about a leak', MAINT, 'Maintenance Desk'],
  ])('%j → handed to %s', (line, agentId, name) => {
    const reply = simulateReply(ask(line));
    expect(reply.text).toBe(`Let me put you through to ${name}.`);
    expect(reply.toolCalls).toEqual([
      {
        name: 'handoff_to_agent',
        arguments: { agent_id: agentId, reason: `caller asked for ${name}`, summary: line },
      },
    ]);
  });

  test('no hand-over without the tool, without a match, or on common words alone', () => {
    // not offered: the other rules (the search for a listing)
    expect(
      simulateReply(ask("I'd like to speak to sales about a listing", TOOLS.slice(0, 3))).toolCalls,
    ).toEqual([
      { name: 'search_knowledge', arguments: { query: "I'd like to speak to sales about a listing" } },
    ]);
    // a word of the description, but no asking to be put through and no name
    expect(simulateReply(ask('Is the listing on Harbour Street still available?')).toolCalls[0]?.name).toBe(
      'search_knowledge',
    );
    // asking to speak, but only common words shared ("about", "caller", "wants")
    expect(
      requestedTarget(handoffTargets(ask('x')), 'Can I speak to someone about what the caller wants'),
    ).toBe(undefined);
    // a person is still a transfer when no target's description says so
    const reply = simulateReply(ask('Can I speak to a real person please?'));
    expect([reply.text, reply.toolCalls.map((c) => c.name)]).toEqual([TRANSFER_REPLY, ['transfer_call']]);
  });

  test('goodbye comes first; a failed hand-over is said as such', () => {
    expect(simulateReply(ask('Sales? never mind, bye')).text).toBe(GOODBYE_REPLY);
    const failed = simulateReply({
      messages: [
        { role: 'system', content: 'You are the receptionist.' },
        { role: 'user', content: 'sales please' },
        {
          role: 'assistant',
          content: 'Let me put you through to Sales.',
          tool_calls: [{ id: 'c1', function: { name: 'handoff_to_agent', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"error":"That agent no longer exists"}' },
      ],
      tools: TOOLS,
    });
    expect(failed).toEqual({ text: HANDOFF_FAILED_REPLY, toolCalls: [] });
  });
});

/** The target's system prompt as the engine builds it: its own prompt, then the note. */
const takingOver = (callerLine?: string) =>
  [
    'You are Sales for Harbour Realty. The property at 12 Harbour Street, Manly is listed at $1,250,000.',
    '',
    '## You are taking over this call',
    'You are Sales.',
    'Reception handed the caller to you. Reason: caller asked for Sales.',
    'Summary: wants to talk about a listing.',
    ...(callerLine ? [`The caller's last line: "${callerLine}"`] : []),
    'Speak first: introduce yourself in a few words and carry on from there; do not greet as if the call were new.',
  ].join('\n');

describe('taking over', () => {
  const line = "I'd like to speak to sales about a listing";

  test("the target introduces itself with the caller's line in hand (full history, or the line alone)", () => {
    const expected = `Hi, this is Sales. You said: "${line}" — I can help with that.`;
    const full = simulateReply({
      messages: [
        { role: 'system', content: takingOver(line) },
        { role: 'assistant', content: 'Hello! How can I help you today?' },
        { role: 'user', content: line },
      ],
      tools: [tool('end_call')],
    });
    expect(full).toEqual({ text: expected, toolCalls: [] });
    const alone = simulateReply({
      messages: [
        { role: 'system', content: takingOver(line) },
        { role: 'user', content: line },
      ],
    });
    expect(alone.text).toBe(expected);
  });

  test("without a caller line, only the introduction; a quote in the line is the note's", () => {
    expect(simulateReply({ messages: [{ role: 'system', content: takingOver() }] }).text).toBe(
      'Hi, this is Sales.',
    );
    const quoted = 'He said "today" was fine';
    expect(
      simulateReply({
        messages: [
          { role: 'system', content: takingOver(quoted.replace(/"/g, "'")) },
          { role: 'user', content: quoted },
        ],
      }).text,
    ).toBe(`Hi, this is Sales. You said: "He said 'today' was fine" — I can help with that.`);
  });

  test('once the caller speaks again, the other rules answer', () => {
    const reply = simulateReply({
      messages: [
        { role: 'system', content: takingOver(line) },
        { role: 'user', content: line },
        { role: 'assistant', content: `Hi, this is Sales. You said: "${line}" — I can help with that.` },
        { role: 'user', content: 'How much is it?' },
      ],
    });
    expect(reply.text).toBe('The property at 12 Harbour Street, Manly is listed at $1,250,000.');
  });
});
