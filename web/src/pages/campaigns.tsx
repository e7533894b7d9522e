import { useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { campaignQueries } from '../api/queries/campaigns';
import { agentQueries } from '../api/queries/agents';
import { Field, FormError, FormActions, ListPage } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
type Day = (typeof DAYS)[number];

function NewCampaign({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const agents = useQuery(agentQueries.all(workspace_id));
  const [name, setName] = useState('');
  const [agentId, setAgentId] = useState('');
  const [timezone, setTimezone] = useState(Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [days, setDays] = useState<Day[]>([...DAYS]);
  const [start, setStart] = useState('00:00');
  const [end, setEnd] = useState('23:59');
  const [attempts, setAttempts] = useState('2');
  const [delay, setDelay] = useState('60');
  const create = useMutation({
    mutationFn: () =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/campaigns', {
          params: { path: { workspace_id } },
          body: {
            name,
            agent_id: agentId || (agents.data?.items[0]?.id ?? ''),
            calling_window: { timezone, days, start, end },
            retry: { max_attempts: Number(attempts), delay_minutes: Number(delay) },
          },
        }),
      ),
    onSuccess: (campaign) => {
      void queries.invalidateQueries({ queryKey: campaignQueries.lists(workspace_id) });
      onDone();
      route(`/campaigns/${campaign.id}`);
    },
  });
  return (
    <form
      class="card"
      aria-label="New campaign"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate();
      }}
    >
      <div class="grid">
        <Field label="Campaign name" name="name" error={create.error}>
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
        </Field>
        <Field label="Agent" name="agent_id" error={create.error}>
          {(p) => (
            <select {...p} value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
              {(agents.data?.items ?? []).map((agent) => (
                <option key={agent.id} value={agent.id}>
                  {agent.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Time zone" name="calling_window.timezone" error={create.error}>
          {(p) => <input {...p} value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />}
        </Field>
        <Field label="Calls from" name="calling_window.start" error={create.error}>
          {(p) => <input {...p} type="time" value={start} onInput={(e) => setStart(e.currentTarget.value)} />}
        </Field>
        <Field label="Calls until" name="calling_window.end" error={create.error}>
          {(p) => <input {...p} type="time" value={end} onInput={(e) => setEnd(e.currentTarget.value)} />}
        </Field>
        <Field label="Attempts per contact" name="retry.max_attempts" error={create.error}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={1}
              value={attempts}
              onInput={(e) => setAttempts(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Minutes between attempts" name="retry.delay_minutes" error={create.error}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={1}
              value={delay}
              onInput={(e) => setDelay(e.currentTarget.value)}
            />
          )}
        </Field>
      </div>
      <fieldset>
        <legend>Calling days</legend>
        {DAYS.map((day) => (
          <label class="check" key={day}>
            <input
              type="checkbox"
              checked={days.includes(day)}
              onChange={(e) =>
                setDays((current) =>
                  e.currentTarget.checked ? [...current, day] : current.filter((d) => d !== day),
                )
              }
            />{' '}
            {day}
          </label>
        ))}
      </fieldset>
      <FormError error={create.error} />
      <FormActions submit="Create campaign" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

export default function Campaigns() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  return (
    <ListPage
      title="Campaigns"
      newLabel="New campaign"
      canWrite={canWrite}
      form={(close) => <NewCampaign onDone={close} />}
      caption="Campaigns"
      {...campaignQueries.list(workspace_id)}
      rowKey={(c) => c.id}
      empty="No campaigns yet."
      refetchInterval={3000}
      columns={[
        { label: 'Name', render: (c) => <a href={`/campaigns/${c.id}`}>{c.name}</a> },
        { label: 'Status', render: (c) => <span class={`badge ${c.status}`}>{c.status}</span> },
        {
          label: 'Progress',
          render: (c) =>
            `${c.progress.completed + c.progress.failed + c.progress.skipped + c.progress.cancelled} / ${c.progress.total}`,
        },
      ]}
    />
  );
}
