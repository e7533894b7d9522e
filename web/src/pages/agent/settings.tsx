import { Field } from '../../components/ui';
import type { SectionProps } from './draft';

/** A `{{name}}` reference, as the service fills them (functions/agents/template.ts). */
const REFERENCE = /\{\{\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** The parameter names the prompt and greeting use, in order of first use. */
export const referencedParameters = (...texts: string[]): string[] => [
  ...new Set(texts.flatMap((text) => [...text.matchAll(REFERENCE)].map((m) => m[1]))),
];

/** What a call must pass for the agent's texts to be whole (a parameter left out is empty text). */
function ParameterList({ names }: { names: string[] }) {
  return (
    <div class="parameter-list" role="group" aria-label="What a call must pass">
      {names.length === 0 ? (
        <p class="hint">The prompt and greeting use no {'{{parameters}}'}: a call needs none.</p>
      ) : (
        <p class="hint">
          A call (start-call, a campaign row, the test chat) should pass{' '}
          {names.map((name, index) => (
            <span key={name}>
              {index > 0 && ', '}
              <code>{name}</code>
            </span>
          ))}
          ; one left out is said as nothing.
        </p>
      )}
    </div>
  );
}

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

/** The agent's name, prompt and greeting, with the {{parameters}} they use. */
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
      <ParameterList names={referencedParameters(draft.prompt, draft.greeting)} />
    </>
  );
}
