import { Field } from '../../components/ui';
import type { SectionProps } from './draft';

/** How the agent handles a call: time zone, length, recording and the call's options (transfers: transfer.tsx). */
export function CallsSection({ draft, edit, error }: SectionProps) {
  return (
    <>
      <h3>Calls</h3>
      <div class="grid">
        <Field label="Time zone" name="settings.timezone" error={error}>
          {(p) => (
            <input {...p} value={draft.timezone} onInput={(e) => edit({ timezone: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Maximum call length (seconds)" name="settings.max_duration_seconds" error={error}>
          {(p) => (
            <input
              {...p}
              type="number"
              value={draft.maxDuration}
              onInput={(e) => edit({ maxDuration: e.currentTarget.value })}
            />
          )}
        </Field>
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.recording}
          onChange={(e) => edit({ recording: e.currentTarget.checked })}
        />{' '}
        Record calls
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.interruptible}
          onChange={(e) => edit({ interruptible: e.currentTarget.checked })}
        />{' '}
        Caller may interrupt
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.growthLoop}
          onChange={(e) => edit({ growthLoop: e.currentTarget.checked })}
        />{' '}
        Caller growth loop
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.memories}
          onChange={(e) => edit({ memories: e.currentTarget.checked })}
        />{' '}
        Conversation memories (+5 credits a call minute when used)
      </label>
      <Field
        label="Specialised terms"
        name="settings.specialised_terms"
        error={error}
        hint="One a line: names and words the agent should hear right."
      >
        {(p) => (
          <textarea
            {...p}
            rows={3}
            value={draft.terms}
            onInput={(e) => edit({ terms: e.currentTarget.value })}
          />
        )}
      </Field>
    </>
  );
}
