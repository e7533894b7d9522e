import { useEffect, useRef } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { agentQueries, type Agent } from '../../api/queries/agents';
import { restoreVersion, versionHref, versionQueries, type AgentVersion } from '../../api/queries/versions';
import { ErrorState, FormError, Loading, PagedTable, when } from '../../components/ui';
import { useSession } from '../../session';
import { VersionDiff } from './version-diff';

/** A version's author as the reader knows them: "you", a member's email, else the id (an API key's). */
function useAuthorName(): (id: string) => string {
  const session = useSession();
  const authors = useQuery(versionQueries.authors(session.organisation.organisation_id));
  return (id) => (id === session.userId ? 'you' : (authors.data?.get(id) ?? id));
}

const changedText = (version: { version: number; changed: string[]; restored_from: number | null }): string =>
  (version.restored_from !== null ? `restored from version ${version.restored_from}: ` : '') +
  (version.version === 1
    ? 'created'
    : version.changed.length === 0
      ? 'nothing (a restore of the same settings)'
      : version.changed.join(', '));

const yesNo = (value: boolean): string => (value ? 'yes' : 'no');

/** The agent as it was in one version, read-only. */
function VersionFacts({ agent }: { agent: AgentVersion['agent'] }) {
  const s = agent.settings;
  const transfer = agent.transfer
    ? `${agent.transfer.mode} to ${agent.transfer.phone_number}${
        agent.transfer.whisper ? ` (whisper: “${agent.transfer.whisper}”)` : ''
      }`
    : agent.transfer_phone_number
      ? `cold to ${agent.transfer_phone_number}`
      : 'none';
  const voicemail = agent.voicemail
    ? agent.voicemail.action === 'leave_message'
      ? `leave a message: “${agent.voicemail.message ?? ''}”`
      : 'hang up on a machine'
    : 'not checked';
  return (
    <>
      <h4>Prompt</h4>
      <p class="prompt-preview" aria-label="Prompt of this version">
        {agent.prompt || '—'}
      </p>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{agent.name}</dd>
        <dt>Greeting</dt>
        <dd>{agent.greeting || '—'}</dd>
        <dt>Voice</dt>
        <dd>{agent.voice ?? 'the default'}</dd>
        <dt>Language</dt>
        <dd>{agent.language}</dd>
        <dt>Transfer</dt>
        <dd>{transfer}</dd>
        <dt>Voicemail</dt>
        <dd>{voicemail}</dd>
        <dt>Time zone</dt>
        <dd>{s.timezone}</dd>
        <dt>Maximum call length</dt>
        <dd>{s.max_duration_seconds} s</dd>
        <dt>Speech</dt>
        <dd>
          {s.speech_speed}, {s.expressiveness}
        </dd>
        <dt>Record calls</dt>
        <dd>{yesNo(s.call_recording)}</dd>
        <dt>Caller may interrupt</dt>
        <dd>{yesNo(s.interruptible)}</dd>
        <dt>Specialised terms</dt>
        <dd>{s.specialised_terms.join(', ') || '—'}</dd>
        <dt>Knowledge bases</dt>
        <dd>{agent.knowledge_base_ids.length}</dd>
        <dt>Success criteria</dt>
        <dd>{agent.success_criteria ?? '—'}</dd>
        <dt>Analysis fields</dt>
        <dd>{agent.analysis_fields.map((f) => f.name).join(', ') || '—'}</dd>
        <dt>Post-call actions</dt>
        <dd>
          {agent.post_call_actions.map((a) => `${a.type}${a.enabled ? '' : ' (off)'}`).join(', ') || '—'}
        </dd>
        <dt>Tools</dt>
        <dd>{agent.tools.map((t) => `${t.name} (${t.type})`).join(', ') || '—'}</dd>
      </dl>
    </>
  );
}

/** One version opened from the list (or from a call's link): what it was, and Restore for members. */
function VersionView(props: {
  workspaceId: string;
  agent: Agent;
  version: number;
  /** The version to compare it with; by default the one before it. */
  compare: number | undefined;
  canWrite: boolean;
  onRestored: (agent: Agent, from: number) => void;
}) {
  const { workspaceId, agent, version } = props;
  const latest = Math.max(agent.version ?? version, version);
  const other =
    props.compare !== undefined && props.compare !== version && props.compare <= latest
      ? props.compare
      : version > 1
        ? version - 1
        : undefined;
  const queries = useQueryClient();
  const shown = useQuery(versionQueries.detail(workspaceId, agent.id, version));
  const author = useAuthorName();
  const restore = useMutation({
    mutationFn: () => restoreVersion(workspaceId, agent.id, version),
    onSuccess: (saved) => {
      queries.setQueryData(agentQueries.detail(workspaceId, agent.id).queryKey, saved);
      void queries.invalidateQueries({ queryKey: versionQueries.prefix(workspaceId, agent.id) });
      props.onRestored(saved, version);
    },
  });
  const current = agent.version === version;
  return (
    <section class="card" aria-label={`Version ${version}`}>
      <h3>Version {version}</h3>
      {shown.isPending && <Loading what="Loading the version…" />}
      {shown.isError && <ErrorState error={shown.error} retry={() => void shown.refetch()} />}
      {shown.data && (
        <>
          <p class="muted wrap">
            Saved {when(shown.data.created_at)} by {author(shown.data.created_by)} · changed:{' '}
            {changedText(shown.data)}
          </p>
          {other !== undefined && (
            <VersionDiff
              workspaceId={workspaceId}
              agentId={agent.id}
              version={{ ...shown.data.agent, version }}
              latest={latest}
              other={other}
            />
          )}
          <details>
            <summary>Everything in version {version}</summary>
            <VersionFacts agent={shown.data.agent} />
          </details>
          {current ? (
            <p class="muted">This is the version the agent runs now.</p>
          ) : (
            props.canWrite && (
              <p>
                <button
                  type="button"
                  class="primary"
                  disabled={restore.isPending}
                  onClick={() => restore.mutate()}
                >
                  Restore version {version}
                </button>{' '}
                <span class="hint">
                  Makes a new version equal to this one; the agent runs it from the next call. Answering calls
                  is left as it is.
                </span>
              </p>
            )
          )}
          <FormError error={restore.error} />
        </>
      )}
      <p>
        <a href={`/agents/${agent.id}#versions`}>Close version {version}</a>
      </p>
    </section>
  );
}

/**
 * The agent's versions, newest first, with what each changed; `?version=N` on the agent page opens
 * one (read-only) with its Restore. Links, not buttons, open and close a version: reading one changes
 * nothing, so a viewer has them too.
 */
export function VersionsSection(props: {
  workspaceId: string;
  agent: Agent;
  canWrite: boolean;
  /** The version asked for in the URL (`?version=`), if any. */
  selected: number | undefined;
  /** The version to compare it with (`?compare=`), if any. */
  compare: number | undefined;
  /** After a restore, with the restored agent and the version it was restored from. */
  onRestored: (agent: Agent, from: number) => void;
  /** The last restore, said until another happens. */
  restored?: { from: number; to: number | null };
}) {
  const { workspaceId, agent, selected } = props;
  const section = useRef<HTMLElement>(null);
  const author = useAuthorName();
  useEffect(() => {
    if (selected !== undefined) section.current?.scrollIntoView({ block: 'start' });
  }, [selected]);
  return (
    <section class="card" id="versions" aria-label="Versions" ref={section}>
      <h2>Versions</h2>
      <p class="muted">
        Every save makes a version; each call records the version it ran
        {agent.version !== null ? ` (now: version ${agent.version})` : ''}. Open a version to see what changed
        from another;{' '}
        <a href={`/analytics?group_by=agent_version&agent_id=${agent.id}`}>
          compare versions' calls in Analytics
        </a>
        .
      </p>
      {props.restored && (
        <p role="status">
          Restored version {props.restored.from} as version {props.restored.to ?? '?'}.
        </p>
      )}
      {selected !== undefined && (
        <VersionView
          key={`${selected}:${props.compare ?? ''}`}
          workspaceId={workspaceId}
          agent={agent}
          version={selected}
          compare={props.compare}
          canWrite={props.canWrite}
          onRestored={props.onRestored}
        />
      )}
      <PagedTable
        {...versionQueries.list(workspaceId, agent.id)}
        caption="Versions"
        empty="No versions yet."
        rowKey={(v) => String(v.version)}
        columns={[
          {
            label: 'Version',
            render: (v) => (
              <>
                {v.version}
                {v.version === agent.version ? (
                  <>
                    {' '}
                    <span class="badge">current</span>
                  </>
                ) : null}
              </>
            ),
          },
          { label: 'Saved', render: (v) => when(v.created_at) },
          { label: 'By', render: (v) => <span class="wrap">{author(v.created_by)}</span> },
          { label: 'What changed', render: (v) => changedText(v) },
          {
            label: 'Open',
            render: (v) => (
              <a href={versionHref(agent.id, v.version)} aria-current={v.version === selected || undefined}>
                View version {v.version}
              </a>
            ),
          },
        ]}
      />
    </section>
  );
}
