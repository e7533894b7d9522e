import { Field } from '../../components/ui';
import type { AgentDraft, SectionProps } from './draft';

const EXPRESSIVENESS: [AgentDraft['expressiveness'], string][] = [
  ['natural', 'Natural'],
  ['expressive', 'Expressive'],
  ['low', 'Low'],
];
const AMBIENT_NOISE: [AgentDraft['ambientNoise'], string][] = [
  ['none', 'None'],
  ['office', 'Office'],
];

/** How the agent sounds: its voice, language, speed, expressiveness and background. */
export function VoiceSection({ draft, edit, error }: SectionProps) {
  return (
    <>
      <div class="grid">
        <Field label="Voice" name="voice" error={error} hint="A voice id; empty: the provider's default.">
          {(p) => (
            <input {...p} value={draft.voice} onInput={(e) => edit({ voice: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Language" name="language" error={error} hint="A BCP 47 tag, e.g. en-AU.">
          {(p) => (
            <input {...p} value={draft.language} onInput={(e) => edit({ language: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Speech speed" name="settings.speech_speed" error={error}>
          {(p) => (
            <select
              {...p}
              value={draft.speechSpeed}
              onChange={(e) => edit({ speechSpeed: e.currentTarget.value as AgentDraft['speechSpeed'] })}
            >
              <option value="slow">Slow</option>
              <option value="medium">Medium</option>
              <option value="fast">Fast</option>
            </select>
          )}
        </Field>
        <Field label="Expressiveness" name="settings.expressiveness" error={error}>
          {(p) => (
            <select
              {...p}
              value={draft.expressiveness}
              onChange={(e) =>
                edit({ expressiveness: e.currentTarget.value as AgentDraft['expressiveness'] })
              }
            >
              {EXPRESSIVENESS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Ambient noise"
          name="settings.ambient_noise"
          error={error}
          hint="Not played: Twilio ConversationRelay has no background sound; kept for your own records."
        >
          {(p) => (
            <select
              {...p}
              value={draft.ambientNoise}
              onChange={(e) => edit({ ambientNoise: e.currentTarget.value as AgentDraft['ambientNoise'] })}
            >
              {AMBIENT_NOISE.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
    </>
  );
}
