import { Field } from '../../components/ui';
import type { SectionProps } from './draft';

/** The prompt with its {{parameters}} marked, as the agent will see them filled per call. */
function PromptPreview({ prompt }: { prompt: string }) {
  const parts = prompt.split(/(\{\{\s*[\w.-]+\s*\}\})/g);
  return (
    <p class="prompt-preview" aria-label="Prompt preview">
      {parts.map((part, index) =>
        /^\{\{.*\}\}$/.test(part) ? (
          <mark key={index} class="parameter">
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </p>
  );
}

/** The agent's name, prompt and greeting. */
export function SettingsSection({ draft, edit, error }: SectionProps) {
  return (
    <>
      <Field label="Name" name="name" error={error}>
        {(p) => <input {...p} value={draft.name} onInput={(e) => edit({ name: e.currentTarget.value })} />}
      </Field>
      <Field label="Prompt" name="prompt" error={error} hint="{{parameters}} are filled per call.">
        {(p) => (
          <textarea
            {...p}
            rows={8}
            value={draft.prompt}
            onInput={(e) => edit({ prompt: e.currentTarget.value })}
          />
        )}
      </Field>
      <PromptPreview prompt={draft.prompt} />
      <Field label="Greeting" name="greeting" error={error}>
        {(p) => (
          <input {...p} value={draft.greeting} onInput={(e) => edit({ greeting: e.currentTarget.value })} />
        )}
      </Field>
    </>
  );
}
