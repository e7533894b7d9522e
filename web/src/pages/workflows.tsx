import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api/client';
import { workflowQueries } from '../api/queries/workflows';
import { Field, FormError, FormActions, ListPage } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

interface WorkflowBody {
  name: string;
  trigger: { type: 'event'; event: 'call.ended' | 'listing.sold' | 'sms.received' | 'contact.created' };
  auto_mode?: boolean;
  stages: Record<string, unknown>;
}

const EXAMPLE_STAGES = JSON.stringify(
  {
    signal: { yolo: false, conditions: [] },
    task: { yolo: false, action: { type: 'add_note', text: 'Follow up {{contact.first_name}}' } },
    outcome: { yolo: false },
  },
  null,
  2,
);

function NewWorkflowForm({ onDone }: { onDone: () => void }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [event, setEvent] = useState<WorkflowBody['trigger']['event']>('call.ended');
  const [autoMode, setAutoMode] = useState(false);
  const [stages, setStages] = useState(EXAMPLE_STAGES);
  const create = useMutation({
    mutationFn: () => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(stages) as Record<string, unknown>;
      } catch {
        throw new Error('The stages are not valid JSON.');
      }
      const body: WorkflowBody = {
        name,
        trigger: { type: 'event', event },
        auto_mode: autoMode,
        stages: parsed,
      };
      return ok(
        api().POST('/api/v1/workspaces/{workspace_id}/workflows', {
          params: { path: { workspace_id } },
          body: body as never,
        }),
      );
    },
    onSuccess: (workflow) => {
      void queries.invalidateQueries({ queryKey: workflowQueries.lists(workspace_id) });
      onDone();
      route(`/workflows/${workflow.id}`);
    },
  });
  return (
    <form
      class="card"
      aria-label="New workflow"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Field label="Workflow name" name="name" error={create.error}>
        {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required />}
      </Field>
      <Field label="Trigger event" name="trigger.event" error={create.error}>
        {(p) => (
          <select {...p} value={event} onChange={(e) => setEvent(e.currentTarget.value as typeof event)}>
            <option value="call.ended">call.ended</option>
            <option value="listing.sold">listing.sold</option>
            <option value="sms.received">sms.received</option>
            <option value="contact.created">contact.created</option>
          </select>
        )}
      </Field>
      <label class="check">
        <input type="checkbox" checked={autoMode} onChange={(e) => setAutoMode(e.currentTarget.checked)} />{' '}
        Auto Mode
      </label>
      <Field
        label="Stages (JSON)"
        name="stages"
        error={create.error}
        hint="signal, task and outcome; yolo: true on a stage skips its review."
      >
        {(p) => (
          <textarea
            {...p}
            rows={10}
            class="code"
            value={stages}
            onInput={(e) => setStages(e.currentTarget.value)}
          />
        )}
      </Field>
      <FormError error={create.error} />
      <FormActions submit="Create workflow" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

export default function Workflows() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  return (
    <ListPage
      title="Workflows"
      newLabel="New workflow"
      canWrite={canWrite}
      form={(close) => <NewWorkflowForm onDone={close} />}
      caption="Workflows"
      {...workflowQueries.list(workspace_id)}
      rowKey={(w) => w.id}
      empty="No workflows yet."
      columns={[
        { label: 'Name', render: (w) => <a href={`/workflows/${w.id}`}>{w.name}</a> },
        {
          label: 'Trigger',
          render: (w) => (w.trigger.type === 'event' ? w.trigger.event : 'external (POST /api/v1/triggers)'),
        },
        { label: 'Auto Mode', render: (w) => (w.auto_mode ? 'On' : 'Off') },
      ]}
    />
  );
}
