import { Field } from '../../components/ui';
import type { AgentDraft, SectionProps } from './draft';

/** Answering-machine detection of outbound calls: hang up on a machine, or leave a message after the beep. */
export function VoicemailSection({ draft, edit, error }: SectionProps) {
  return (
    <>
      <h3>Voicemail</h3>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.voicemailOn}
          onChange={(e) => edit({ voicemailOn: e.currentTarget.checked })}
        />{' '}
        Detect answering machines on outbound calls
      </label>
      {draft.voicemailOn && (
        <div class="grid">
          <Field label="On a machine" name="voicemail.action" error={error}>
            {(p) => (
              <select
                {...p}
                value={draft.voicemailAction}
                onChange={(e) =>
                  edit({ voicemailAction: e.currentTarget.value as AgentDraft['voicemailAction'] })
                }
              >
                <option value="hangup">Hang up</option>
                <option value="leave_message">Leave a message after the beep</option>
              </select>
            )}
          </Field>
          {draft.voicemailAction === 'leave_message' && (
            <Field
              label="Message"
              name="voicemail.message"
              error={error}
              hint="At most 1,000 characters; {{parameters}} are filled per call. Spoken with the provider's own voice for the agent's language."
            >
              {(p) => (
                <textarea
                  {...p}
                  rows={3}
                  value={draft.voicemailMessage}
                  onInput={(e) => edit({ voicemailMessage: e.currentTarget.value })}
                />
              )}
            </Field>
          )}
        </div>
      )}
    </>
  );
}
