import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRoute } from 'preact-iso';
import { api, ok } from '../api/client';
import { campaignQueries } from '../api/queries/campaigns';
import { ImportProgress, uploadFile } from '../components/import-progress';
import { ErrorState, FormError, Loading, PageHeader, StatusButtons } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Status = 'running' | 'paused' | 'cancelled';

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
        <dt>Credits used</dt>
        <dd>{p.credits_used}</dd>
      </dl>
      <p>
        <a href={`/calls?campaign_id=${c.id}`}>Calls of this campaign</a>
      </p>
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
    </section>
  );
}
