import { BUILT_IN_TOOL_NAMES, BUILT_IN_TOOLS } from '../../functions/agents/built-in-tools.js';
import { errorKind } from '../../functions/agents/tool-calls.js';
import { ToolsInput, TestToolBody } from '../../functions/agents/tools-schema.js';
import { agentTools } from '../../functions/conversation/tools/built-in.js';
import { TOOL_NAMES } from '../../functions/conversation/engine/model.js';
import { ValidationError, type ValidationIssue } from '../../functions/platform/errors.js';
import { parseOrThrow } from '../../functions/platform/validation.js';

/**
 * Agent tools' bounds that need no stack: one list of built-in names, the text rules of
 * `static_arguments` and test `arguments`, no 422 showing a header value, logs keeping a tool
 * failure's kind only.
 */

const SECRET = 'Bearer sk_live_do_not_echo_4711';

function issues(schema: Parameters<typeof parseOrThrow>[0], body: unknown): ValidationIssue[] {
  try {
    parseOrThrow(schema, body, 'body');
  } catch (error) {
    if (error instanceof ValidationError) return error.detail;
    throw error;
  }
  return [];
}

const fnTool = (i: number, extra: Record<string, unknown> = {}) => ({
  type: 'function',
  name: `tool_${i}`,
  description: 'Books things',
  parameters: { type: 'object', properties: {} },
  url: 'https://api.example.com/tools/book',
  headers: { authorization: SECRET },
  ...extra,
});

describe('built-in tool names', () => {
  it('are one list: the schema refuses each, the engine offers and runs only these', () => {
    expect([...BUILT_IN_TOOL_NAMES]).toEqual([
      'end_call',
      'handoff_to_agent',
      'search_knowledge',
      'transfer_call',
    ]);
    // The engine's names are this list (engine/model.ts imports it).
    expect(TOOL_NAMES).toBe(BUILT_IN_TOOLS);
    // handoff_to_agent is offered by the engine only when the agent has targets (engine/handoff.ts).
    const offered = agentTools({ knowledge: true, transfer: true }).map((t) => t.name);
    expect([...offered, BUILT_IN_TOOLS.handoffToAgent].sort()).toEqual([...BUILT_IN_TOOL_NAMES]);
    for (const name of Object.values(BUILT_IN_TOOLS)) {
      const [issue] = issues(ToolsInput, [fnTool(0, { name })]);
      expect(issue).toMatchObject({ loc: ['body', 0, 'name'] });
      expect(issue.msg).toContain(
        "must not be a built-in tool's name (end_call, handoff_to_agent, search_knowledge, transfer_call)",
      );
    }
  });
});

describe('static_arguments and test arguments follow the text rules', () => {
  it.each([
    ['NUL in a value', { office: 'no\u0000rth' }, ['office'], 'U+0000'],
    ['a bidi override deep inside', { a: [{ b: 'x\u202ey' }] }, ['a', 0, 'b'], 'U+202E'],
    ['NUL in a key', { 'of\u0000fice': 'north' }, ['of\u0000fice'], 'U+0000'],
    ['a lone surrogate', { office: '\ud800' }, ['office'], 'U+D800'],
  ])('%s: 422 at its path', (_what, args, path, found) => {
    const [staticIssue] = issues(ToolsInput, [fnTool(0, { static_arguments: args, headers: undefined })]);
    expect(staticIssue).toMatchObject({ type: 'value_error', loc: ['body', 0, 'static_arguments', ...path] });
    expect(staticIssue.msg).toContain(found);
    const [testIssue] = issues(TestToolBody, { arguments: args });
    expect(testIssue).toMatchObject({ type: 'value_error', loc: ['body', 'arguments', ...path] });
  });

  it('takes tabs, line breaks, accents, emoji, right-to-left scripts, numbers and nulls', () => {
    const args = { note: 'Zoë\t🏡\nשלום', n: 3, nothing: null, list: ['a', 1, true] };
    expect(issues(ToolsInput, [fnTool(0, { static_arguments: args })])).toEqual([]);
    expect(issues(TestToolBody, { arguments: args })).toEqual([]);
  });
});

describe('no 422 shows a header value', () => {
  const shown = (detail: ValidationIssue[]) => JSON.stringify(detail);

  it.each([
    ['21 tools', Array.from({ length: 21 }, (_, i) => fnTool(i))],
    [
      '11 headers',
      [fnTool(0, { headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-h${i}`, SECRET])) })],
    ],
    ['an unknown tool type', [{ ...fnTool(0), type: 'webhook' }]],
    ['a tool without its description', [{ ...fnTool(0), description: undefined }]],
    ['a CR/LF in a value', [fnTool(0, { headers: { authorization: `${SECRET}\r\nx: y` } })]],
    ['a value beside a bad header name', [fnTool(0, { headers: { 'bad name': SECRET } })]],
  ])('%s: 422, the value never in it (names may be)', (_what, tools) => {
    const detail = issues(ToolsInput, tools);
    expect(detail.length).toBeGreaterThan(0);
    expect(shown(detail)).not.toContain('sk_live');
  });

  it('an echoed header map keeps its names', () => {
    const headers = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-h${i}`, SECRET]));
    const [issue] = issues(ToolsInput, [fnTool(0, { headers })]);
    expect(issue.loc).toEqual(['body', 0, 'headers']);
    expect(issue.input).toMatchObject({ 'x-h0': '[hidden]', 'x-h10': '[hidden]' });
  });
});

describe("a tool failure's log line", () => {
  it.each([
    ['HTTP 500 Internal Server Error: card 4111111111111111 declined', 'HTTP 500 Internal Server Error'],
    ['Streamable HTTP error: Error POSTing to endpoint (HTTP 500): zoe@example.com', 'Streamable HTTP error'],
    [
      "arguments do not match the tool's parameters: /date must be string",
      "arguments do not match the tool's parameters",
    ],
    ['timed out after 8000 ms', 'timed out after 8000 ms'],
  ])('%j → %j', (error, kind) => expect(errorKind(error)).toBe(kind));
});
