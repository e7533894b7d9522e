import { Field } from '../../components/ui';
import type { SectionProps, TransferMode } from './draft';

/**
 * Where the agent's `transfer_call` hands a caller, and how: cold (the person just picks up) or warm
 * (the person first hears a summary of the call, or the whisper written here).
 */
export function TransferSection({ draft, edit, error }: SectionProps) {
  const warm = draft.transferMode === 'warm';
  return (
    <>
      <h3>Transfer</h3>
      <div class="grid">
        <Field
          label="Transfer number"
          name="transfer.phone_number"
          error={error}
          hint="Where the agent hands a caller over (E.164); empty: it cannot transfer."
        >
          {(p) => (
            <input
              {...p}
              type="tel"
              value={draft.transferNumber}
              onInput={(e) => edit({ transferNumber: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field
          label="Transfer mode"
          name="transfer.mode"
          error={error}
          hint={
            warm
              ? 'Warm: the person hears who is calling and why before the caller is connected.'
              : 'Cold: the caller is connected at once; the person hears nothing first.'
          }
        >
          {(p) => (
            <select
              {...p}
              value={draft.transferMode}
              onChange={(e) => edit({ transferMode: e.currentTarget.value as TransferMode })}
            >
              <option value="cold">Cold</option>
              <option value="warm">Warm</option>
            </select>
          )}
        </Field>
      </div>
      {warm && (
        <Field
          label="Whisper"
          name="transfer.whisper"
          error={error}
          hint="What the person hears first, at most 500 characters: {{summary}} is the model's summary of the call so far, {{parameters}} are filled per call. Empty: the summary alone."
        >
          {(p) => (
            <textarea
              {...p}
              rows={3}
              placeholder="A caller about {{listing_address}}: {{summary}}"
              value={draft.transferWhisper}
              onInput={(e) => edit({ transferWhisper: e.currentTarget.value })}
            />
          )}
        </Field>
      )}
    </>
  );
}
