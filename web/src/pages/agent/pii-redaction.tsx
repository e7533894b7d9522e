import { useState } from 'preact/hooks';
import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { messageOf } from '../../api/client';
import { agentQueries, updateAgent, type Agent } from '../../api/queries/agents';
import { useSession, useWorkspaceId } from '../../session';

type Setting = Agent['pii_redaction'];
type Category = Setting['categories'][number];

const CATEGORIES: { value: Category; label: string }[] = [
  { value: 'email', label: 'E-mail addresses' },
  { value: 'phone_number', label: 'Phone numbers' },
  { value: 'credit_card', label: 'Card numbers' },
  { value: 'bank_account', label: 'Bank accounts (BSB, account, IBAN)' },
  { value: 'government_id', label: 'Government ids (TFN, Medicare, passport, licence, SSN)' },
  { value: 'date_of_birth', label: 'Dates of birth' },
  { value: 'address', label: 'Addresses' },
  { value: 'person_name', label: 'Names' },
];

/**
 * PII redaction before storage: saved on its own (not with the form), for calls made after it. The
 * live conversation still hears the values; transcripts, analysis, webhooks and actions get tokens.
 */
export function PiiRedactionSection({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [draft, setDraft] = useState<Setting>(agent.pii_redaction);
  const save = useMutation({
    mutationFn: (pii_redaction: Setting) => updateAgent(workspace_id, agent.id, { pii_redaction }),
    onSuccess: (saved) => queries.setQueryData(agentQueries.detail(workspace_id, agent.id).queryKey, saved),
  });
  const toggle = (category: Category, on: boolean) =>
    setDraft({
      ...draft,
      categories: on
        ? CATEGORIES.map((c) => c.value).filter((c) => c === category || draft.categories.includes(c))
        : draft.categories.filter((c) => c !== category),
    });
  return (
    <section class="card" id="redaction" aria-labelledby="pii-redaction">
      <h2 id="pii-redaction">PII redaction</h2>
      <p class="muted">
        What callers say about themselves is replaced by tokens such as [EMAIL_1] before anything is stored or
        sent (transcripts, analysis, webhooks, post-call actions). The agent still hears the real values
        during the call. Audio is not redacted. Applies to calls made after saving.
      </p>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.enabled}
          disabled={!canWrite}
          onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })}
        />{' '}
        Redact personal data before storage
      </label>
      {draft.enabled && (
        <fieldset>
          <legend>Categories</legend>
          {CATEGORIES.map((c) => (
            <label class="check" key={c.value}>
              <input
                type="checkbox"
                checked={draft.categories.includes(c.value)}
                disabled={!canWrite}
                onChange={(e) => toggle(c.value, e.currentTarget.checked)}
              />{' '}
              {c.label}
            </label>
          ))}
          <label class="check">
            <input
              type="checkbox"
              checked={draft.recordings === 'drop'}
              disabled={!canWrite}
              onChange={(e) => setDraft({ ...draft, recordings: e.currentTarget.checked ? 'drop' : 'keep' })}
            />{' '}
            Delete the recording once the call is analysed
          </label>
        </fieldset>
      )}
      {canWrite && (
        <div class="row">
          <button
            type="button"
            disabled={save.isPending || (draft.enabled && draft.categories.length === 0)}
            onClick={() => save.mutate(draft)}
          >
            Save redaction
          </button>
          {save.isSuccess && <span role="status">Saved</span>}
          {save.isError && <span role="alert">{messageOf(save.error)}</span>}
        </div>
      )}
    </section>
  );
}
