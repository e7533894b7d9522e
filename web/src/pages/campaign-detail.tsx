import { useEffect, useRef, useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { campaignQueries, type Campaign } from '../api/queries/campaigns';
import { ImportProgress, uploadFile } from '../components/import-progress';
import {
  ErrorState,
  FormError,
  Loading,
  PagedTable,
  PageHeader,
  StatusButtons,
  when,
} from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Status = 'running' | 'paused' | 'cancelled';
type Window = Campaign['calling_window'];

const DAYS: Window['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_NAMES: Record<Window['days'][number], string> = {
  mon: 'Mon',
  tue: 'Tue',
  wed: 'Wed',
  thu: 'Thu',
  fri: 'Fri',
  sat: 'Sat',
  sun: 'Sun',
};

/** "Mon–Fri 09:00–17:00 (Sat 10:00–14:00), Australia/Sydney time" (the recipient's own zone when so set). */
function windowText(window: Window): string {
  const days = DAYS.filter((day) => window.days.includes(day));
  const hours = days
    .filter((day) => window.day_hours[day])
    .map((day) => `${DAY_NAMES[day]} ${window.day_hours[day].start}–${window.day_hours[day].end}`);
  const zone = window.timezone === 'recipient' ? "each recipient's own time" : `${window.timezone} time`;
  return `${days.map((day) => DAY_NAMES[day]).join(', ')} ${window.start}–${window.end}${
    hours.length > 0 ? ` (${hours.join(', ')})` : ''
  }, ${zone}`;
}

const OUTCOMES: Record<string, string> = {
  completed: 'answered',
  busy: 'busy',
  no_answer: 'no answer',
  failed: 'failed',
  voicemail: 'voicemail',
};

/** When the campaign places its next call and why then (or why it places none). */
function NextDial({ campaign }: { campaign: Campaign }) {
  return (
    <section class="card" aria-label="Next call">
      <h2>Next call</h2>
      <dl class="facts">
        <dt>Calling window</dt>
        <dd>{windowText(campaign.calling_window)}</dd>
        <dt>Next call at</dt>
        <dd>{campaign.next_dial_at ? when(campaign.next_dial_at) : '—'}</dd>
        <dt>Why</dt>
        <dd aria-label="Next dial reason">
          {campaign.next_dial_reason ??
            (campaign.status === 'completed' || campaign.status === 'cancelled'
              ? `the campaign is ${campaign.status}`
              : '—')}
        </dd>
        <dt>Retries</dt>
        <dd>
          up to {campaign.retry.max_attempts} attempts, {campaign.retry.delay_minutes} min apart, after{' '}
          {campaign.retry.on.map((o) => OUTCOMES[o] ?? o).join(', ') || 'nothing'}
          {campaign.retry_on_voicemail ? ', and after a voicemail' : '; a voicemail is final'}
        </dd>
        <dt>Lines at once</dt>
        <dd>{campaign.max_concurrency}</dd>
      </dl>
    </section>
  );
}

/** Rows of the uploads that lacked a {{parameter}} of the agent's prompt (taken with it empty). */
function Warnings({ warnings }: { warnings: Campaign['warnings'] }) {
  if (warnings.length === 0) return null;
  return (
    <section class="card" aria-label="Upload warnings">
      <h2>Upload warnings</h2>
      <ul>
        {warnings.map((w) => (
          <li key={`${w.job_id}-${w.parameter}`}>
            {w.count} {w.count === 1 ? 'row lacks' : 'rows lack'} <code>{`{{${w.parameter}}}`}</code> (called
            with it empty): row{w.rows.length === 1 ? '' : 's'} {w.rows.join(', ')}
            {w.count > w.rows.length ? ', …' : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Each batch contact: its state, its attempts with their outcomes (each a link to its call). */
function Contacts({ workspaceId, campaign }: { workspaceId: string; campaign: Campaign }) {
  const queries = useQueryClient();
  const list = campaignQueries.contacts(workspaceId, campaign.id);
  // The campaign is asked for every second while it runs: when its progress or status moves, a
  // contact's state or outcome did too (the last outcomes land as the campaign completes).
  const moved = `${campaign.status} ${JSON.stringify(campaign.progress)}`;
  const seen = useRef(moved);
  useEffect(() => {
    if (seen.current === moved) return;
    seen.current = moved;
    void queries.invalidateQueries({ queryKey: list.queryKey });
  }, [moved]);
  return (
    <section class="card" aria-label="Campaign contacts">
      <h2>Contacts</h2>
      <PagedTable
        {...list}
        caption="Campaign contacts"
        empty="No contacts yet: upload a CSV."
        rowKey={(contact) => contact.id}
        columns={[
          { label: 'Phone', render: (contact) => contact.phone },
          {
            label: 'State',
            render: (contact) => (
              <span class={`badge ${contact.state}`}>{contact.state.replace(/_/g, ' ')}</span>
            ),
          },
          { label: 'Attempts', render: (contact) => contact.attempts.length },
          {
            label: 'Outcome',
            render: (contact) =>
              contact.attempts.length === 0 ? (
                '—'
              ) : (
                <ol>
                  {contact.attempts.map((attempt) => (
                    <li key={attempt.call_id}>
                      <a href={`/calls/${attempt.call_id}`}>
                        {attempt.outcome ? (OUTCOMES[attempt.outcome] ?? attempt.outcome) : 'calling…'}
                      </a>{' '}
                      <span class="muted">{when(attempt.at)}</span>
                    </li>
                  ))}
                </ol>
              ),
          },
          {
            label: 'Next attempt',
            render: (contact) =>
              contact.next_attempt_at ? when(contact.next_attempt_at) : (contact.reason ?? '—'),
          },
        ]}
      />
    </section>
  );
}

export default function CampaignDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const { params } = useRoute();
  const campaign_id = params.id;
  const queries = useQueryClient();
  const [file, setFile] = useState<File>();
  const [uploadJob, setUploadJob] = useState<string>();
  const campaign = useQuery({
    ...campaignQueries.detail(workspace_id, campaign_id),
    refetchInterval: (query) => (query.state.data?.status === 'running' ? 1000 : 5000),
  });
  const change = useMutation({
    mutationFn: (status: Status) =>
      ok(
        api().PATCH('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}', {
          params: { path: { workspace_id, campaign_id } },
          body: { status },
        }),
      ),
    onSuccess: (saved) =>
      queries.setQueryData(campaignQueries.detail(workspace_id, campaign_id).queryKey, saved),
  });
  const upload = useMutation({
    mutationFn: async () => {
      if (!file) throw new Error('Choose a CSV file.');
      const job = await ok(
        api().POST('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/uploads', {
          params: { path: { workspace_id, campaign_id } },
          body: { format: 'csv', file_name: file.name },
        }),
      );
      if (!job.upload_url) throw new Error('The upload job has no upload URL.');
      await uploadFile(job.upload_url, file);
      await ok(
        api().POST('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/uploads/{job_id}/start', {
          params: { path: { workspace_id, campaign_id, job_id: job.job_id } },
        }),
      );
      return job.job_id;
    },
    onSuccess: setUploadJob,
  });
  if (campaign.isPending) return <Loading />;
  if (campaign.isError) return <ErrorState error={campaign.error} retry={() => void campaign.refetch()} />;
  const c = campaign.data;
  const p = c.progress;
  const finished = p.completed + p.failed + p.skipped + p.cancelled;
  const percent = p.total > 0 ? Math.floor((finished / p.total) * 100) : 0;
  return (
    <section>
      <PageHeader title={c.name}>
        {canWrite && (
          <StatusButtons
            pending={change.isPending}
            onChange={(to) => change.mutate(to)}
            actions={[
              {
                label: c.status === 'draft' ? 'Start' : 'Resume',
                to: 'running',
                shown: c.status === 'draft' || c.status === 'paused',
                kind: 'primary',
              },
              { label: 'Pause', to: 'paused', shown: c.status === 'running' },
              {
                label: 'Cancel campaign',
                to: 'cancelled',
                shown: c.status !== 'completed' && c.status !== 'cancelled',
                kind: 'danger',
              },
            ]}
          />
        )}
      </PageHeader>
      <FormError error={change.error} />
      <p>
        Status:{' '}
        <span class={`badge ${c.status}`} role="status" aria-label="Campaign status">
          {c.status}
        </span>
        {c.paused_reason ? ` (${c.paused_reason})` : ''}
      </p>
      <label>
        Campaign progress
        <progress max={100} value={percent} aria-valuetext={`${percent} %`} />
      </label>
      <dl class="facts">
        <dt>Contacts</dt>
        <dd>{p.total}</dd>
        <dt>Pending</dt>
        <dd>{p.pending}</dd>
        <dt>Calling</dt>
        <dd>{p.calling}</dd>
        <dt>Completed</dt>
        <dd>{p.completed}</dd>
        <dt>Failed</dt>
        <dd>{p.failed}</dd>
        <dt>Retry scheduled</dt>
        <dd>{p.retry_scheduled}</dd>
        <dt>Voicemail</dt>
        <dd>{p.voicemail}</dd>
        <dt>Skipped (do not call)</dt>
        <dd>{p.skipped}</dd>
        <dt>Cancelled</dt>
        <dd>{p.cancelled}</dd>
        <dt>Credits used</dt>
        <dd>{p.credits_used}</dd>
      </dl>
      <p>
        <a href={`/calls?campaign_id=${c.id}`}>Calls of this campaign</a>
      </p>
      <NextDial campaign={c} />
      <Warnings warnings={c.warnings} />
      {canWrite && (c.status === 'draft' || c.status === 'paused') && (
        <section class="card" aria-label="Upload contacts">
          <h2>Upload contacts</h2>
          <form
            class="row"
            onSubmit={(event) => {
              event.preventDefault();
              upload.mutate();
            }}
          >
            <label>
              Contacts CSV
              <input
                type="file"
                accept=".csv,text/csv"
                onChange={(e) => setFile(e.currentTarget.files?.[0])}
              />
            </label>
            <button type="submit" class="primary" disabled={!file || upload.isPending}>
              Upload
            </button>
          </form>
          <FormError error={upload.error} />
          {uploadJob && (
            <ImportProgress
              queryKey={['campaign-upload', workspace_id, uploadJob]}
              load={async () => {
                const job = await ok(
                  api().GET('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/jobs/{job_id}', {
                    params: { path: { workspace_id, campaign_id, job_id: uploadJob } },
                  }),
                );
                void queries.invalidateQueries({
                  queryKey: campaignQueries.detail(workspace_id, campaign_id).queryKey,
                });
                return job;
              }}
            />
          )}
        </section>
      )}
      <Contacts workspaceId={workspace_id} campaign={c} />
    </section>
  );
}
