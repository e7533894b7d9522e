import { useMutation } from '@tanstack/preact-query';
import { api, ok } from '../../api/client';
import { Field, FieldMessages, FormError } from '../../components/ui';
import { draftKey, type ActionDraft, type ActionType, type SectionProps } from './draft';

const ACTION_TYPES: [ActionType, string][] = [
  ['sms_owner', 'SMS to the owner'],
  ['sms_caller', 'SMS to the caller'],
  ['email_summary', 'Email summary'],
  ['webhook', 'Webhook'],
  ['contact_update', 'Update the contact'],
  ['profile_enrichment', 'Enrich the caller profile'],
];
const typeLabel = (type: ActionType): string => ACTION_TYPES.find(([t]) => t === type)?.[1] ?? type;

const text = (value: unknown): string =>
  typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : '';

/** The config fields each type has (the others have none). */
const CONFIG_FIELDS: Partial<
  Record<ActionType, { key: string; label: string; type: string; hint?: string }[]>
> = {
  sms_owner: [
    { key: 'to', label: 'Owner mobile', type: 'tel', hint: 'E.164, e.g. +61491570156' },
    {
      key: 'message',
      label: 'Message',
      type: 'text',
      hint: 'Optional: {{summary}}, {{caller}} are filled in.',
    },
  ],
  sms_caller: [
    { key: 'message', label: 'Message', type: 'text', hint: 'Optional: {{agent_name}} is filled in.' },
  ],
  email_summary: [
    { key: 'to', label: 'Email to', type: 'text', hint: "Comma-separated; empty: the workspace's admins." },
  ],
  webhook: [{ key: 'url', label: 'Webhook URL', type: 'url' }],
};

/** What happens after each call; a saved webhook action can be sent a test payload. */
export function PostCallActionsSection({
  agent,
  workspaceId,
  draft: form,
  edit,
  error,
  canWrite,
}: SectionProps) {
  const drafts = form.actions;
  const onChange = (actions: ActionDraft[]) => edit({ actions });
  const update = (index: number, change: Partial<ActionDraft>) =>
    onChange(drafts.map((d, i) => (i === index ? { ...d, ...change } : d)));
  const test = useMutation({
    mutationFn: (action_id: string) =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/post-call-actions/{action_id}/test', {
          params: { path: { workspace_id: workspaceId, agent_id: agent.id, action_id } },
          body: {},
        }),
      ),
  });
  const tested = test.data?.attempt;
  return (
    <fieldset class="subform">
      <legend>Post-call actions</legend>
      <p class="hint">What happens after each call (at most 10).</p>
      {drafts.length === 0 && <p class="muted">No post-call actions.</p>}
      {drafts.map((draft, index) => {
        const at = `post_call_actions.${index}`;
        const name = `${typeLabel(draft.type)} (action ${index + 1})`;
        return (
          <fieldset class="item" key={draft.key}>
            <legend>{name}</legend>
            <label class="check">
              <input
                type="checkbox"
                checked={draft.enabled}
                onChange={(e) => update(index, { enabled: e.currentTarget.checked })}
              />{' '}
              Enabled
            </label>
            {(CONFIG_FIELDS[draft.type] ?? []).map((field) => (
              <Field
                key={field.key}
                label={field.label}
                name={`${at}.config.${field.key}`}
                error={error}
                hint={field.hint}
              >
                {(p) => (
                  <input
                    {...p}
                    type={field.type}
                    value={text(draft.config[field.key])}
                    onInput={(e) =>
                      update(index, { config: { ...draft.config, [field.key]: e.currentTarget.value } })
                    }
                  />
                )}
              </Field>
            ))}
            <FieldMessages error={error} name={`${at}.config`} />
            {canWrite && (
              <div class="buttons">
                {draft.type === 'webhook' && draft.id && (
                  <button
                    type="button"
                    onClick={() => test.mutate(draft.id!)}
                    disabled={test.isPending}
                    aria-label={`Send test payload (action ${index + 1})`}
                  >
                    Send test payload
                  </button>
                )}
                <button
                  type="button"
                  class="danger"
                  aria-label={`Remove ${name}`}
                  onClick={() => onChange(drafts.filter((_, i) => i !== index))}
                >
                  Remove
                </button>
              </div>
            )}
            {draft.type === 'webhook' && !draft.id && (
              <p class="hint">Save the agent to send this action a test payload.</p>
            )}
          </fieldset>
        );
      })}
      <FieldMessages error={error} name="post_call_actions" />
      {tested && (
        <p role="status">
          Test payload sent:{' '}
          {tested.status_code !== null
            ? `HTTP ${tested.status_code}`
            : `no answer (${tested.error ?? 'error'})`}
          .
        </p>
      )}
      <FormError error={test.error} />
      {canWrite && (
        <div class="row">
          <Field label="New action type" name="new_action_type">
            {(p) => (
              <select
                {...p}
                value={form.newActionType}
                onChange={(e) => edit({ newActionType: e.currentTarget.value as ActionType })}
              >
                {ACTION_TYPES.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button
            type="button"
            disabled={drafts.length >= 10}
            onClick={() =>
              onChange([...drafts, { key: draftKey(), type: form.newActionType, enabled: true, config: {} }])
            }
          >
            Add action
          </button>
        </div>
      )}
    </fieldset>
  );
}
