import { Field, FieldMessages } from '../../components/ui';
import { draftKey, type AnalysisField, type AnalysisFieldDraft, type SectionProps } from './draft';

const FIELD_TYPES: [AnalysisField['type'], string][] = [
  ['string', 'Text'],
  ['number', 'Number'],
  ['boolean', 'Yes or no'],
  ['enum', 'One of a list'],
];

/** What post-call analysis judges (success criteria) and extracts (analysis fields) from each call. */
export function AnalysisSection({ draft, edit, error, canWrite }: SectionProps) {
  return (
    <>
      <Field
        label="Success criteria"
        name="success_criteria"
        error={error}
        hint="What makes a call successful; empty: the agent's goal (its prompt)."
      >
        {(p) => (
          <textarea
            {...p}
            rows={2}
            value={draft.successCriteria}
            onInput={(e) => edit({ successCriteria: e.currentTarget.value })}
          />
        )}
      </Field>
      <AnalysisFieldsEditor
        drafts={draft.fields}
        onChange={(fields) => edit({ fields })}
        error={error}
        canWrite={canWrite}
      />
    </>
  );
}

function AnalysisFieldsEditor(props: {
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
