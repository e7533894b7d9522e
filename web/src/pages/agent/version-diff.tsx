import { useQuery } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { versionQueries, type AgentVersion } from '../../api/queries/versions';
import { diffText } from '../../components/text-diff';
import { ErrorState, Loading } from '../../components/ui';

type Versioned = AgentVersion['agent'];

const text = (value: unknown): string =>
  value === null || value === undefined || value === ''
    ? '—'
    : typeof value === 'string'
      ? value
      : typeof value === 'boolean'
        ? value
          ? 'yes'
          : 'no'
        : typeof value === 'number'
          ? String(value)
          : JSON.stringify(value);

/**
 * A version's fields by a readable name, flattened (settings one by one, tools and post-call actions
 * one by one by their name or id), the prompt apart: what the fields table compares.
 */
export function versionFields(agent: Versioned): Map<string, string> {
  const fields = new Map<string, string>([
    ['Name', text(agent.name)],
    ['Greeting', text(agent.greeting)],
    ['Voice', text(agent.voice)],
    ['Language', text(agent.language)],
  ]);
  for (const [name, value] of Object.entries(agent.settings)) fields.set(`Settings: ${name}`, text(value));
  fields.set('Transfer', text(agent.transfer ?? agent.transfer_phone_number));
  fields.set('Voicemail', text(agent.voicemail));
  fields.set('Knowledge bases', text(agent.knowledge_base_ids.join(', ')));
  fields.set('Success criteria', text(agent.success_criteria));
  for (const field of agent.analysis_fields) {
    const { name, ...rest } = field;
    fields.set(`Analysis field: ${name}`, text(rest));
  }
  for (const action of agent.post_call_actions) {
    const { id, ...rest } = action;
    fields.set(`Post-call action: ${action.type} ${id}`, text(rest));
  }
  for (const tool of agent.tools) {
    const { name, ...rest } = tool;
    fields.set(`Tool: ${name}`, text(rest));
  }
  return fields;
}

/** The fields that are plain text, whatever they hold (a greeting that reads as JSON stays whole). */
const TEXT_FIELDS = new Set(['Name', 'Greeting', 'Voice', 'Language', 'Success criteria', 'Knowledge bases']);

const jsonObject = (value: string): Record<string, unknown> | undefined => {
  if (!value.startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

/**
 * A setting held as an object in both versions (a tool, a post-call action, voicemail…), narrowed to
 * its keys that differ: a tool whose timeout changed shows `{"timeout_ms":5000}` → `{"timeout_ms":8000}`,
 * not its whole definition twice.
 */
function narrowed(name: string, before: string, after: string): [string, string] {
  const a = TEXT_FIELDS.has(name) ? undefined : jsonObject(before);
  const b = TEXT_FIELDS.has(name) ? undefined : jsonObject(after);
  if (!a || !b) return [before, after];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
    (key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]),
  );
  const only = (o: Record<string, unknown>) =>
    JSON.stringify(Object.fromEntries(keys.filter((key) => key in o).map((key) => [key, o[key]])));
  return [only(a), only(b)];
}

/** The rows that differ: name, before, after (an object's keys that differ, when both have one). */
export function changedRows(before: Versioned, after: Versioned): [string, string, string][] {
  const a = versionFields(before);
  const b = versionFields(after);
  const names = [...new Set([...a.keys(), ...b.keys()])];
  return names
    .filter((name) => a.get(name) !== b.get(name))
    .map((name) => [name, ...narrowed(name, a.get(name) ?? '(none)', b.get(name) ?? '(none)')]);
}

/** The prompt of `before` becoming `after`: removed words struck through, added ones marked. */
function PromptDiff({ before, after }: { before: string; after: string }) {
  if (before === after) return <p class="muted">The prompt is the same.</p>;
  return (
    <p class="prompt-preview diff" aria-label="Prompt changes">
      {diffText(before, after).map((part, index) =>
        part.kind === 'same' ? (
          part.text
        ) : part.kind === 'added' ? (
          <ins key={index}>{part.text}</ins>
        ) : (
          <del key={index}>{part.text}</del>
        ),
      )}
    </p>
  );
}

/**
 * Version `version` against version `other` (by default the one before it): the prompt as a text
 * diff, every other field that differs as a table. A select picks the other version (`?compare=`).
 */
export function VersionDiff(props: {
  workspaceId: string;
  agentId: string;
  version: Versioned & { version: number };
  /** The newest version (the choice of versions to compare with). */
  latest: number;
  other: number;
}) {
  const { workspaceId, agentId, version, other } = props;
  const { route } = useLocation();
  const shown = useQuery(versionQueries.detail(workspaceId, agentId, other));
  const choices = Array.from({ length: props.latest }, (_, i) => props.latest - i).filter(
    (n) => n !== version.version,
  );
  const [before, after] =
    shown.data && other < version.version ? [shown.data.agent, version] : [version, shown.data?.agent];
  const [from, to] = other < version.version ? [other, version.version] : [version.version, other];
  return (
    <section class="diff-view" aria-label={`Changes from version ${from} to version ${to}`}>
      <h4>
        Changes from version {from} to version {to}
      </h4>
      <label>
        Compare with{' '}
        <select
          value={String(other)}
          onChange={(e) =>
            route(`/agents/${agentId}?version=${version.version}&compare=${e.currentTarget.value}#versions`)
          }
        >
          {choices.map((n) => (
            <option key={n} value={String(n)}>
              Version {n}
            </option>
          ))}
        </select>
      </label>
      {shown.isPending && <Loading what="Loading the version…" />}
      {shown.isError && <ErrorState error={shown.error} retry={() => void shown.refetch()} />}
      {before && after && (
        <>
          <h5>Prompt</h5>
          <PromptDiff before={before.prompt} after={after.prompt} />
          <h5>Settings</h5>
          <DiffTable rows={changedRows(before, after)} from={from} to={to} />
        </>
      )}
    </section>
  );
}

function DiffTable({ rows, from, to }: { rows: [string, string, string][]; from: number; to: number }) {
  if (rows.length === 0) return <p class="muted">No other field differs.</p>;
  return (
    <div class="table-wrap">
      <table class="diff-table">
        <caption class="visually-hidden">
          Fields that differ between version {from} and version {to}
        </caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Version {from}</th>
            <th scope="col">Version {to}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, a, b]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td data-label={`Version ${from}`}>
                <del>{a}</del>
              </td>
              <td data-label={`Version ${to}`}>
                <ins>{b}</ins>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
