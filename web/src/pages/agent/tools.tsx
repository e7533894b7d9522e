import { useState } from 'preact/hooks';
import { useMutation } from '@tanstack/preact-query';
import { ApiError } from '../../api/client';
import { agentToolMutations, type ToolListResult, type ToolTestResult } from '../../api/queries/agent-tools';
import { Field, FieldMessages, FormError } from '../../components/ui';
import {
  draftKey,
  HEADER_MASK_PREFIX,
  newToolDraft,
  parseJsonObject,
  type HeaderDraft,
  type SavedTool,
  type SectionProps,
  type ToolDraft,
} from './draft';

/** At most this many tools an agent (docs/tools.md). */
const MAX_TOOLS = 20;
const MAX_HEADERS = 10;

const kindLabel = (type: ToolDraft['type']) => (type === 'function' ? 'Function tool' : 'MCP server');
const toolLabel = (draft: { type: ToolDraft['type'] }, index: number) =>
  `${kindLabel(draft.type)} (tool ${index + 1})`;

/**
 * The agent's own tools (docs/tools.md): function tools (an endpoint the model calls, with a JSON
 * Schema of its arguments) and MCP servers. Saved with the rest of the form (the PATCH replaces the
 * list); a saved function tool can be tried (Test) and a saved MCP server's tools listed. Header
 * values come back masked: a masked value is sent back as it is (the stored value is kept) unless a
 * new value is typed. A viewer reads them.
 */
export function ToolsSection(props: SectionProps) {
  const { draft: form, edit, error, canWrite, agent } = props;
  if (!canWrite) return <ToolsReadOnly tools={agent.tools} />;
  const drafts = form.tools;
  const onChange = (tools: ToolDraft[]) => edit({ tools });
  const update = (index: number, change: Partial<ToolDraft>) =>
    onChange(drafts.map((d, i) => (i === index ? { ...d, ...change } : d)));
  return (
    <fieldset class="subform">
      <legend>Tools</legend>
      <p class="hint">
        Your endpoints and MCP servers the agent may call during a conversation (at most {MAX_TOOLS}).
      </p>
      {drafts.length === 0 && <p class="muted">No tools.</p>}
      {drafts.map((draft, index) => (
        <ToolEditor
          key={draft.key}
          {...props}
          tool={draft}
          index={index}
          update={(change) => update(index, change)}
          remove={() => onChange(drafts.filter((_, i) => i !== index))}
        />
      ))}
      <FieldMessages error={error} name="tools" />
      <div class="buttons">
        <button
          type="button"
          disabled={drafts.length >= MAX_TOOLS}
          onClick={() => onChange([...drafts, newToolDraft('function')])}
        >
          Add function tool
        </button>
        <button
          type="button"
          disabled={drafts.length >= MAX_TOOLS}
          onClick={() => onChange([...drafts, newToolDraft('mcp')])}
        >
          Add MCP server
        </button>
      </div>
    </fieldset>
  );
}

function ToolEditor({
  tool,
  index,
  update,
  remove,
  error,
  workspaceId,
  agent,
}: SectionProps & {
  tool: ToolDraft;
  index: number;
  update: (change: Partial<ToolDraft>) => void;
  remove: () => void;
}) {
  const at = `tools.${index}`;
  const name = toolLabel(tool, index);
  const text = (
    label: string,
    field: string,
    key: keyof ToolDraft,
    options: { hint?: string; type?: string; rows?: number; mono?: boolean } = {},
  ) => (
    <Field label={label} name={`${at}.${field}`} error={error} hint={options.hint}>
      {(p) =>
        options.rows ? (
          <textarea
            {...p}
            rows={options.rows}
            class={options.mono ? 'code' : undefined}
            spellcheck={!options.mono}
            value={tool[key] as string}
            onInput={(e) => update({ [key]: e.currentTarget.value })}
          />
        ) : (
          <input
            {...p}
            type={options.type ?? 'text'}
            value={tool[key] as string}
            onInput={(e) => update({ [key]: e.currentTarget.value })}
          />
        )
      }
    </Field>
  );
  // Test and List tools run what the agent holds: a tool saved under this name and kind.
  const saved = agent.tools.find((t) => t.name === tool.savedName && t.type === tool.type);
  return (
    <fieldset class="item" aria-label={name}>
      <legend>
        {name}
        {tool.name && `: ${tool.name}`}
      </legend>
      <FieldMessages error={error} name={at} />
      <div class="grid">
        {text(tool.type === 'function' ? 'Tool name' : 'Server name', 'name', 'name', {
          hint:
            tool.type === 'function'
              ? 'Lower case: a letter, then letters, digits or _, e.g. book_inspection.'
              : 'Lower case, at most 20 characters: its tools are offered as {name}__{tool}.',
        })}
        {text(tool.type === 'function' ? 'Endpoint URL' : 'Server URL', 'url', 'url', { type: 'url' })}
      </div>
      {tool.type === 'function' &&
        text('Description', 'description', 'description', {
          rows: 2,
          hint: 'What it does and when to use it: the model reads this.',
        })}
      {tool.type === 'function' &&
        text('Parameters (JSON Schema)', 'parameters', 'parameters', {
          rows: 8,
          mono: true,
          hint: 'A JSON Schema of type "object": the arguments the model gives.',
        })}
      <HeadersEditor
        headers={tool.headers}
        at={`${at}.headers`}
        error={error}
        toolName={name}
        onChange={(headers) => update({ headers })}
      />
      {tool.type === 'function' &&
        text('Static arguments (JSON)', 'static_arguments', 'staticArguments', {
          rows: 3,
          mono: true,
          hint: 'Optional: merged into the arguments sent (they win); the model never sees them.',
        })}
      {tool.type === 'mcp' &&
        text('Allowed tools', 'allowed_tools', 'allowedTools', {
          hint: "Comma-separated names of the server's tools; empty: all of them.",
        })}
      <div class="grid">
        {text('Timeout (ms)', 'timeout_ms', 'timeoutMs', {
          type: 'number',
          hint: '500–30,000; empty: 8,000.',
        })}
        {tool.type === 'function' &&
          text('Said while it runs', 'speak_during', 'speakDuring', { hint: 'Optional.' })}
        {tool.type === 'function' &&
          text('Said when it fails', 'speak_on_failure', 'speakOnFailure', { hint: 'Optional.' })}
      </div>
      {saved && tool.type === 'function' && (
        <ToolTest workspaceId={workspaceId} agentId={agent.id} tool={saved} label={name} />
      )}
      {saved && tool.type === 'mcp' && (
        <McpList workspaceId={workspaceId} agentId={agent.id} tool={saved} label={name} />
      )}
      {!saved && (
        <p class="hint">
          Save the agent to {tool.type === 'function' ? 'test this tool' : "list this server's tools"}.
        </p>
      )}
      <div class="buttons">
        <button type="button" class="danger" aria-label={`Remove ${name}`} onClick={remove}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}

/** A tool's headers: names, and write-only values (a stored one shows as its mask until replaced). */
function HeadersEditor(props: {
  headers: HeaderDraft[];
  at: string;
  error: unknown;
  toolName: string;
  onChange: (headers: HeaderDraft[]) => void;
}) {
  const { headers, at, error, onChange } = props;
  const update = (index: number, change: Partial<HeaderDraft>) =>
    onChange(headers.map((h, i) => (i === index ? { ...h, ...change } : h)));
  return (
    <fieldset class="subform" aria-label={`Headers of ${props.toolName}`}>
      <legend>Headers</legend>
      <p class="hint">
        Sent with every request. Values are write-only: a stored value shows as {HEADER_MASK_PREFIX} and its
        last 4 characters and is kept unless you type a new one.
      </p>
      {headers.map((header, index) => (
        <div class="grid" key={header.key}>
          {/* The API's messages about a header (its name or its value) are at `headers.<name>`: under the value. */}
          <Field label={`Header ${index + 1} name`} name={`${at}.${index}.name`}>
            {(p) => (
              <input
                {...p}
                value={header.name}
                autocomplete="off"
                onInput={(e) => update(index, { name: e.currentTarget.value })}
              />
            )}
          </Field>
          <Field
            label={`Header ${index + 1} value`}
            name={`${at}.${header.name.trim()}`}
            error={error}
            hint={header.stored ? `Stored: ${header.stored}. Type a new value to replace it.` : undefined}
          >
            {(p) => (
              <input
                {...p}
                type="password"
                autocomplete="new-password"
                placeholder={header.stored}
                value={header.value}
                onInput={(e) => update(index, { value: e.currentTarget.value })}
              />
            )}
          </Field>
          <div class="buttons">
            <button
              type="button"
              class="danger"
              aria-label={`Remove header ${index + 1} of ${props.toolName}`}
              onClick={() => onChange(headers.filter((_, i) => i !== index))}
            >
              Remove header
            </button>
          </div>
        </div>
      ))}
      <FieldMessages error={error} name={at} />
      <button
        type="button"
        disabled={headers.length >= MAX_HEADERS}
        aria-label={`Add header to ${props.toolName}`}
        onClick={() => onChange([...headers, { key: draftKey(), name: '', value: '' }])}
      >
        Add header
      </button>
    </fieldset>
  );
}

/** Runs the saved function tool once with the arguments typed, and shows what came back. */
function ToolTest(props: { workspaceId: string; agentId: string; tool: SavedTool; label: string }) {
  const [args, setArgs] = useState('{}');
  const [problem, setProblem] = useState<ApiError>();
  const test = useMutation(agentToolMutations.test(props.workspaceId, props.agentId, props.tool.name));
  const run = () => {
    const parsed = parseJsonObject(args);
    if ('problem' in parsed) {
      setProblem(
        new ApiError(422, 'Some fields need attention.', [
          { type: 'json_invalid', loc: ['body', 'arguments'], msg: parsed.problem },
        ]),
      );
      return;
    }
    setProblem(undefined);
    test.mutate(parsed.value);
  };
  const error = problem ?? test.error;
  return (
    <div class="tool-test">
      <Field
        label="Test arguments (JSON)"
        name="arguments"
        error={error}
        nested
        hint="What the model would pass; runs the saved tool, checked against its saved parameters."
      >
        {(p) => (
          <textarea
            {...p}
            rows={3}
            class="code"
            spellcheck={false}
            value={args}
            onInput={(e) => setArgs(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="button" onClick={run} disabled={test.isPending} aria-label={`Test ${props.label}`}>
        {test.isPending ? 'Testing…' : 'Test'}
      </button>
      {!problem && <FormError error={test.error} />}
      {test.data && !problem && <TestResult result={test.data} />}
    </div>
  );
}

function TestResult({ result }: { result: ToolTestResult }) {
  return (
    <div class="tool-result" role="status" aria-label="Test result">
      <dl class="facts">
        <dt>Status</dt>
        <dd>{result.status}</dd>
        <dt>HTTP status</dt>
        <dd>{result.http_status ?? '—'}</dd>
        <dt>Duration</dt>
        <dd>{result.duration_ms} ms</dd>
      </dl>
      <pre class="code wrap">
        {typeof result.result === 'string' ? result.result : JSON.stringify(result.result, null, 2)}
      </pre>
    </div>
  );
}

/** Lists the saved MCP server's tools, each marked offered or not (allowed_tools). */
function McpList(props: { workspaceId: string; agentId: string; tool: SavedTool; label: string }) {
  const list = useMutation(agentToolMutations.list(props.workspaceId, props.agentId, props.tool.name));
  return (
    <div class="tool-test">
      <button
        type="button"
        onClick={() => list.mutate()}
        disabled={list.isPending}
        aria-label={`List tools of ${props.label}`}
      >
        {list.isPending ? 'Listing…' : 'List tools'}
      </button>
      <FormError error={list.error} />
      {list.data && <ServerTools result={list.data} />}
    </div>
  );
}

function ServerTools({ result }: { result: ToolListResult }) {
  if (result.error)
    return (
      <p class="form-error" role="status">
        The server could not be listed: {result.error}
      </p>
    );
  if (result.tools.length === 0) return <p role="status">The server offers no tools.</p>;
  return (
    <div role="status" aria-label="Server tools">
      <ul class="server-tools">
        {result.tools.map((t) => (
          <li key={t.name}>
            <code>{t.name}</code> — {t.allowed ? 'offered to the agent' : 'not offered'}
            {t.description && <span class="muted"> · {t.description}</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** What a viewer sees: the tools as text (header values masked, as the API returns them). */
function ToolsReadOnly({ tools }: { tools: SavedTool[] }) {
  return (
    <div>
      {tools.length === 0 && <p class="muted">No tools.</p>}
      {tools.map((tool, index) => (
        <div class="item" key={`${tool.type}-${tool.name}`} role="group" aria-label={toolLabel(tool, index)}>
          <h3>
            {toolLabel(tool, index)}: <code>{tool.name}</code>
          </h3>
          <dl class="facts wrap">
            <dt>URL</dt>
            <dd>{tool.url}</dd>
            {tool.type === 'function' && (
              <>
                <dt>Description</dt>
                <dd>{tool.description}</dd>
                <dt>Parameters</dt>
                <dd>
                  <pre class="code wrap">{JSON.stringify(tool.parameters, null, 2)}</pre>
                </dd>
                {tool.static_arguments && (
                  <>
                    <dt>Static arguments</dt>
                    <dd>
                      <pre class="code wrap">{JSON.stringify(tool.static_arguments, null, 2)}</pre>
                    </dd>
                  </>
                )}
                {tool.speak_during && (
                  <>
                    <dt>Said while it runs</dt>
                    <dd>{tool.speak_during}</dd>
                  </>
                )}
                {tool.speak_on_failure && (
                  <>
                    <dt>Said when it fails</dt>
                    <dd>{tool.speak_on_failure}</dd>
                  </>
                )}
              </>
            )}
            {tool.type === 'mcp' && (
              <>
                <dt>Allowed tools</dt>
                <dd>{tool.allowed_tools?.length ? tool.allowed_tools.join(', ') : 'All'}</dd>
              </>
            )}
            {Object.keys(tool.headers ?? {}).length > 0 && (
              <>
                <dt>Headers</dt>
                <dd>
                  {Object.entries(tool.headers ?? {})
                    .map(([name, mask]) => `${name}: ${mask}`)
                    .join(', ')}
                </dd>
              </>
            )}
            <dt>Timeout</dt>
            <dd>{tool.timeout_ms} ms</dd>
          </dl>
        </div>
      ))}
    </div>
  );
}
