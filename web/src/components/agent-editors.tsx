import { useMutation, useQuery } from '@tanstack/preact-query';
import { api, ApiError, ok } from '../api/client';
import type { operations } from '../api/schema';
import { Empty, ErrorState, Field, FormError, Loading } from './ui';

/**
 * The agent page's list editors: its knowledge bases, its post-call analysis fields and its post-call
 * actions. Each edits a draft the agent form sends in its one PATCH (the API replaces these lists
 * whole); the API's 422 messages show next to the field they name (`analysis_fields.0.name`, …).
 */

export type AgentBody = NonNullable<operations['updateAgent']['requestBody']>['content']['application/json'];
export type AnalysisField = NonNullable<AgentBody['analysis_fields']>[number];
export type ActionType = NonNullable<AgentBody['post_call_actions']>[number]['type'];

let draftKeys = 0;
const draftKey = (): string => `draft-${(draftKeys += 1)}`;

// ── Knowledge bases ───────────────────────────────────────────────────────────────────────────────

async function allKnowledgeBases(workspace_id: string) {
  const bases = [];
  let cursor: string | undefined;
  do {
    const page = await ok(
      api().GET('/api/v1/workspaces/{workspace_id}/knowledge-bases', {
        params: { path: { workspace_id }, query: { limit: 100, cursor } },
      }),
    );
    bases.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return bases;
}

/** Checkboxes of the workspace's knowledge bases; the checked ones are those the agent searches. */
export function KnowledgeBasePicker(props: {
  workspaceId: string;
  selected: string[];
  onChange: (ids: string[]) => void;
  error: unknown;
}) {
  const bases = useQuery({
    queryKey: ['knowledge-bases', props.workspaceId, 'all'],
    queryFn: () => allKnowledgeBases(props.workspaceId),
  });
  const toggle = (id: string, on: boolean) =>
    props.onChange(on ? [...props.selected, id] : props.selected.filter((s) => s !== id));
  return (
    <fieldset class="subform">
      <legend>Knowledge bases</legend>
      {bases.isPending && <Loading what="Loading knowledge bases…" />}
      {bases.isError && <ErrorState error={bases.error} retry={() => void bases.refetch()} />}
      {bases.data?.length === 0 && (
        <Empty>
          This workspace has no knowledge bases yet (<a href="/knowledge">Knowledge</a>).
        </Empty>
      )}
      {bases.data?.map((base) => (
        <label class="check" key={base.id}>
          <input
            type="checkbox"
            checked={props.selected.includes(base.id)}
            onChange={(e) => toggle(base.id, e.currentTarget.checked)}
          />{' '}
          {base.name} <span class="muted">({base.kind})</span>
        </label>
      ))}
      {/* A base deleted since it was chosen: shown, so that it can be unchecked. */}
      {bases.data &&
        props.selected
          .filter((id) => !bases.data.some((base) => base.id === id))
          .map((id) => (
            <label class="check" key={id}>
              <input type="checkbox" checked onChange={(e) => toggle(id, e.currentTarget.checked)} /> {id}{' '}
              <span class="muted">(not found)</span>
            </label>
          ))}
      <FieldMessages error={props.error} name="knowledge_base_ids" />
    </fieldset>
  );
}

/** 422 messages about a list as a whole (`knowledge_base_ids`: an unknown base, a repeated one). */
function FieldMessages({ error, name }: { error: unknown; name: string }) {
  const messages = error instanceof ApiError ? error.fieldMessages(name) : [];
  if (messages.length === 0) return null;
  return <small class="field-error">{messages.join(' ')}</small>;
}

// ── Analysis fields ──────────────────────────────────────────────────────────────────────────────

export interface AnalysisFieldDraft {
  key: string;
  name: string;
  type: AnalysisField['type'];
  description: string;
  /** Comma-separated while edited (enum fields only). */
  values: string;
}

export const analysisFieldDrafts = (fields: AnalysisField[]): AnalysisFieldDraft[] =>
  fields.map((f) => ({
    key: draftKey(),
    name: f.name,
    type: f.type,
    description: f.description,
    values: (f.enum_values ?? []).join(', '),
  }));

export const analysisFieldsBody = (drafts: AnalysisFieldDraft[]): AnalysisField[] =>
  drafts.map((d) => ({
    name: d.name.trim(),
    type: d.type,
    description: d.description,
    ...(d.type === 'enum'
      ? {
          enum_values: d.values
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean),
        }
      : {}),
  }));

const FIELD_TYPES: [AnalysisField['type'], string][] = [
  ['string', 'Text'],
  ['number', 'Number'],
  ['boolean', 'Yes or no'],
  ['enum', 'One of a list'],
];

export function AnalysisFieldsEditor(props: {
  drafts: AnalysisFieldDraft[];
  onChange: (drafts: AnalysisFieldDraft[]) => void;
  error: unknown;
  canWrite: boolean;
}) {
  const { drafts, onChange, error } = props;
  const update = (index: number, change: Partial<AnalysisFieldDraft>) =>
    onChange(drafts.map((d, i) => (i === index ? { ...d, ...change } : d)));
  return (
    <fieldset class="subform">
      <legend>Analysis fields</legend>
      <p class="hint">What post-call analysis extracts from each call (at most 20).</p>
      {drafts.length === 0 && <p class="muted">No analysis fields.</p>}
      {drafts.map((draft, index) => {
        const at = `analysis_fields.${index}`;
        return (
          <fieldset class="item" key={draft.key}>
            <legend>Analysis field {index + 1}</legend>
            <div class="grid">
              <Field label="Field name" name={`${at}.name`} error={error} hint="e.g. budget">
                {(p) => (
                  <input
                    {...p}
                    value={draft.name}
                    onInput={(e) => update(index, { name: e.currentTarget.value })}
                  />
                )}
              </Field>
              <Field label="Field type" name={`${at}.type`} error={error}>
                {(p) => (
                  <select
                    {...p}
                    value={draft.type}
                    onChange={(e) => update(index, { type: e.currentTarget.value as AnalysisField['type'] })}
                  >
                    {FIELD_TYPES.map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            </div>
            <Field label="Field description" name={`${at}.description`} error={error}>
              {(p) => (
                <input
                  {...p}
                  value={draft.description}
                  onInput={(e) => update(index, { description: e.currentTarget.value })}
                />
              )}
            </Field>
            {draft.type === 'enum' && (
              <Field label="Allowed values" name={`${at}.enum_values`} error={error} hint="Comma-separated.">
                {(p) => (
                  <input
                    {...p}
                    value={draft.values}
                    onInput={(e) => update(index, { values: e.currentTarget.value })}
                  />
                )}
              </Field>
            )}
            {props.canWrite && (
              <button
                type="button"
                class="danger"
                aria-label={`Remove analysis field ${index + 1}`}
                onClick={() => onChange(drafts.filter((_, i) => i !== index))}
              >
                Remove
              </button>
            )}
          </fieldset>
        );
      })}
      <FieldMessages error={error} name="analysis_fields" />
      {props.canWrite && (
        <button
          type="button"
          onClick={() =>
            onChange([...drafts, { key: draftKey(), name: '', type: 'string', description: '', values: '' }])
          }
        >
          Add field
        </button>
      )}
    </fieldset>
  );
}

// ── Post-call actions ───────────────────────────────────────────────────────────────────────────

export interface ActionDraft {
  key: string;
  /** Absent until the agent is saved with it. */
  id?: string;
  type: ActionType;
  enabled: boolean;
  config: Record<string, unknown>;
}

export const ACTION_TYPES: [ActionType, string][] = [
  ['sms_owner', 'SMS to the owner'],
  ['sms_caller', 'SMS to the caller'],
  ['email_summary', 'Email summary'],
  ['webhook', 'Webhook'],
  ['contact_update', 'Update the contact'],
  ['profile_enrichment', 'Enrich the caller profile'],
];
const typeLabel = (type: ActionType): string => ACTION_TYPES.find(([t]) => t === type)?.[1] ?? type;

export const actionDrafts = (
  actions: { id: string; type: ActionType; enabled: boolean; config: Record<string, unknown> }[],
): ActionDraft[] => actions.map((a) => ({ key: draftKey(), ...a, config: { ...a.config } }));

const text = (value: unknown): string =>
  typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : '';

/** The config the API takes for each type (docs/webhooks.md): blank optional fields are left out. */
function configBody(draft: ActionDraft): Record<string, unknown> {
  const config = { ...draft.config };
  for (const key of ['to', 'message', 'url'])
    if (typeof config[key] === 'string' && (config[key] as string).trim() === '') delete config[key];
  if (draft.type === 'email_summary' && typeof config.to === 'string') {
    const addresses = config.to
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    config.to = addresses.length === 1 ? addresses[0] : addresses;
  }
  return config;
}

export const actionsBody = (drafts: ActionDraft[]): NonNullable<AgentBody['post_call_actions']> =>
  drafts.map((d) => ({
    ...(d.id ? { id: d.id } : {}),
    type: d.type,
    enabled: d.enabled,
    config: configBody(d),
  }));

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

export function PostCallActionsEditor(props: {
  workspaceId: string;
  agentId: string;
  drafts: ActionDraft[];
  onChange: (drafts: ActionDraft[]) => void;
  newType: ActionType;
  onNewType: (type: ActionType) => void;
  error: unknown;
  canWrite: boolean;
}) {
  const { drafts, onChange, error } = props;
  const update = (index: number, change: Partial<ActionDraft>) =>
    onChange(drafts.map((d, i) => (i === index ? { ...d, ...change } : d)));
  const test = useMutation({
    mutationFn: (action_id: string) =>
      ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/post-call-actions/{action_id}/test', {
          params: { path: { workspace_id: props.workspaceId, agent_id: props.agentId, action_id } },
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
            {props.canWrite && (
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
      {props.canWrite && (
        <div class="row">
          <Field label="New action type" name="new_action_type">
            {(p) => (
              <select
                {...p}
                value={props.newType}
                onChange={(e) => props.onNewType(e.currentTarget.value as ActionType)}
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
              onChange([...drafts, { key: draftKey(), type: props.newType, enabled: true, config: {} }])
            }
          >
            Add action
          </button>
        </div>
      )}
    </fieldset>
  );
}
