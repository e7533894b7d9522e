import { useEffect, useState } from 'preact/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useLocation, useRoute } from 'preact-iso';
import { api, ok, messageOf } from '../api/client';
import {
  actionDrafts,
  actionsBody,
  AnalysisFieldsEditor,
  analysisFieldDrafts,
  analysisFieldsBody,
  KnowledgeBasePicker,
  PostCallActionsEditor,
  type ActionType,
} from '../components/agent-editors';
import { TestChat } from '../components/test-chat';
import { ErrorState, Field, FormError, Loading, PageHeader } from '../components/ui';
import { useSession, useWorkspaceId } from '../session';

type Agent = Awaited<ReturnType<typeof loadAgent>>;

const loadAgent = (workspace_id: string, agent_id: string) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/agents/{agent_id}', {
      params: { path: { workspace_id, agent_id } },
    }),
  );

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

const EXPRESSIVENESS: [Agent['settings']['expressiveness'], string][] = [
  ['natural', 'Natural'],
  ['expressive', 'Expressive'],
  ['low', 'Low'],
];
const AMBIENT_NOISE: [Agent['settings']['ambient_noise'], string][] = [
  ['none', 'None'],
  ['office', 'Office'],
];

/** Everything an agent has but its Answering calls switch, saved with one PATCH. */
function AgentForm({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const [name, setName] = useState(agent.name);
  const [prompt, setPrompt] = useState(agent.prompt);
  const [greeting, setGreeting] = useState(agent.greeting);
  const [speed, setSpeed] = useState(agent.settings.speech_speed);
  const [expressiveness, setExpressiveness] = useState(agent.settings.expressiveness);
  const [ambientNoise, setAmbientNoise] = useState(agent.settings.ambient_noise);
  const [timezone, setTimezone] = useState(agent.settings.timezone);
  const [maxDuration, setMaxDuration] = useState(String(agent.settings.max_duration_seconds));
  const [recording, setRecording] = useState(agent.settings.call_recording);
  const [interruptible, setInterruptible] = useState(agent.settings.interruptible);
  const [growthLoop, setGrowthLoop] = useState(agent.settings.caller_growth_loop);
  const [memories, setMemories] = useState(agent.settings.conversation_memories);
  const [terms, setTerms] = useState(agent.settings.specialised_terms.join('\n'));
  const [voice, setVoice] = useState(agent.voice ?? '');
  const [language, setLanguage] = useState(agent.language);
  const [transfer, setTransfer] = useState(agent.transfer_phone_number ?? '');
  const [knowledgeBases, setKnowledgeBases] = useState(agent.knowledge_base_ids);
  const [successCriteria, setSuccessCriteria] = useState(agent.success_criteria ?? '');
  const [fields, setFields] = useState(() => analysisFieldDrafts(agent.analysis_fields));
  const [actions, setActions] = useState(() => actionDrafts(agent.post_call_actions));
  const [newActionType, setNewActionType] = useState<ActionType>('webhook');
  const save = useMutation({
    mutationFn: () =>
      ok(
        api().PATCH('/api/v1/workspaces/{workspace_id}/agents/{agent_id}', {
          params: { path: { workspace_id, agent_id: agent.id } },
          body: {
            name,
            prompt,
            greeting,
            settings: {
              speech_speed: speed,
              expressiveness,
              ambient_noise: ambientNoise,
              timezone,
              max_duration_seconds: Number(maxDuration),
              call_recording: recording,
              interruptible,
              caller_growth_loop: growthLoop,
              conversation_memories: memories,
              specialised_terms: terms
                .split('\n')
                .map((t) => t.trim())
                .filter(Boolean),
            },
            voice: voice.trim() || null,
            language: language.trim(),
            transfer_phone_number: transfer.trim() || null,
            knowledge_base_ids: knowledgeBases,
            success_criteria: successCriteria.trim() || null,
            analysis_fields: analysisFieldsBody(fields),
            post_call_actions: actionsBody(actions),
          },
        }),
      ),
    onSuccess: (saved) => {
      queries.setQueryData(['agent', workspace_id, agent.id], saved);
      // New actions have their ids now (sending them again keeps them, and "Send test payload" needs them).
      setActions(actionDrafts(saved.post_call_actions));
      setFields(analysisFieldDrafts(saved.analysis_fields));
    },
  });
  return (
    <form
      class="card"
      aria-label="Agent settings"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <fieldset disabled={!canWrite}>
        <Field label="Name" name="name" error={save.error}>
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Prompt" name="prompt" error={save.error} hint="{{parameters}} are filled per call.">
          {(p) => (
            <textarea {...p} rows={8} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
          )}
        </Field>
        <PromptPreview prompt={prompt} />
        <Field label="Greeting" name="greeting" error={save.error}>
          {(p) => <input {...p} value={greeting} onInput={(e) => setGreeting(e.currentTarget.value)} />}
        </Field>
        <h2>Voice and language</h2>
        <div class="grid">
          <Field
            label="Voice"
            name="voice"
            error={save.error}
            hint="A voice id; empty: the provider's default."
          >
            {(p) => <input {...p} value={voice} onInput={(e) => setVoice(e.currentTarget.value)} />}
          </Field>
          <Field label="Language" name="language" error={save.error} hint="A BCP 47 tag, e.g. en-AU.">
            {(p) => <input {...p} value={language} onInput={(e) => setLanguage(e.currentTarget.value)} />}
          </Field>
          <Field label="Speech speed" name="settings.speech_speed" error={save.error}>
            {(p) => (
              <select {...p} value={speed} onChange={(e) => setSpeed(e.currentTarget.value as typeof speed)}>
                <option value="slow">Slow</option>
                <option value="medium">Medium</option>
                <option value="fast">Fast</option>
              </select>
            )}
          </Field>
          <Field label="Expressiveness" name="settings.expressiveness" error={save.error}>
            {(p) => (
              <select
                {...p}
                value={expressiveness}
                onChange={(e) => setExpressiveness(e.currentTarget.value as typeof expressiveness)}
              >
                {EXPRESSIVENESS.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Ambient noise" name="settings.ambient_noise" error={save.error}>
            {(p) => (
              <select
                {...p}
                value={ambientNoise}
                onChange={(e) => setAmbientNoise(e.currentTarget.value as typeof ambientNoise)}
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
        <h2>Calls</h2>
        <div class="grid">
          <Field
            label="Transfer number"
            name="transfer_phone_number"
            error={save.error}
            hint="Where the agent hands a caller over (E.164); empty: it cannot transfer."
          >
            {(p) => (
              <input {...p} type="tel" value={transfer} onInput={(e) => setTransfer(e.currentTarget.value)} />
            )}
          </Field>
          <Field label="Time zone" name="settings.timezone" error={save.error}>
            {(p) => <input {...p} value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />}
          </Field>
          <Field
            label="Maximum call length (seconds)"
            name="settings.max_duration_seconds"
            error={save.error}
          >
            {(p) => (
              <input
                {...p}
                type="number"
                value={maxDuration}
                onInput={(e) => setMaxDuration(e.currentTarget.value)}
              />
            )}
          </Field>
        </div>
        <label class="check">
          <input
            type="checkbox"
            checked={recording}
            onChange={(e) => setRecording(e.currentTarget.checked)}
          />{' '}
          Record calls
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={interruptible}
            onChange={(e) => setInterruptible(e.currentTarget.checked)}
          />{' '}
          Caller may interrupt
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={growthLoop}
            onChange={(e) => setGrowthLoop(e.currentTarget.checked)}
          />{' '}
          Caller growth loop
        </label>
        <label class="check">
          <input type="checkbox" checked={memories} onChange={(e) => setMemories(e.currentTarget.checked)} />{' '}
          Conversation memories (+5 credits a call minute when used)
        </label>
        <Field
          label="Specialised terms"
          name="settings.specialised_terms"
          error={save.error}
          hint="One a line: names and words the agent should hear right."
        >
          {(p) => <textarea {...p} rows={3} value={terms} onInput={(e) => setTerms(e.currentTarget.value)} />}
        </Field>
        <KnowledgeBasePicker
          workspaceId={workspace_id}
          selected={knowledgeBases}
          onChange={setKnowledgeBases}
          error={save.error}
        />
        <h2>Post-call analysis</h2>
        <Field
          label="Success criteria"
          name="success_criteria"
          error={save.error}
          hint="What makes a call successful; empty: the agent's goal (its prompt)."
        >
          {(p) => (
            <textarea
              {...p}
              rows={2}
              value={successCriteria}
              onInput={(e) => setSuccessCriteria(e.currentTarget.value)}
            />
          )}
        </Field>
        <AnalysisFieldsEditor drafts={fields} onChange={setFields} error={save.error} canWrite={canWrite} />
        <PostCallActionsEditor
          workspaceId={workspace_id}
          agentId={agent.id}
          drafts={actions}
          onChange={setActions}
          newType={newActionType}
          onNewType={setNewActionType}
          error={save.error}
          canWrite={canWrite}
        />
      </fieldset>
      <FormError error={save.error} />
      {save.isSuccess && <p role="status">Saved.</p>}
      {canWrite && (
        <button type="submit" class="primary" disabled={save.isPending}>
          Save
        </button>
      )}
    </form>
  );
}

function AnsweringSwitch({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const queries = useQueryClient();
  const toggle = useMutation({
    mutationFn: (answering_calls: boolean) =>
      ok(
        api().PATCH('/api/v1/workspaces/{workspace_id}/agents/{agent_id}', {
          params: { path: { workspace_id, agent_id: agent.id } },
          body: { answering_calls },
        }),
      ),
    onSuccess: (saved) => queries.setQueryData(['agent', workspace_id, agent.id], saved),
  });
  return (
    <div class="row">
      <label class="check">
        <input
          type="checkbox"
          role="switch"
          checked={agent.answering_calls}
          disabled={!canWrite || toggle.isPending}
          onChange={(e) => toggle.mutate(e.currentTarget.checked)}
        />{' '}
        Answering calls
      </label>
      {agent.suspended_by_billing && <span class="badge warn">Suspended by billing</span>}
      {toggle.isError && <span role="alert">{messageOf(toggle.error)}</span>}
    </div>
  );
}

function StartCall({ agent }: { agent: Agent }) {
  const workspace_id = useWorkspaceId();
  const { route } = useLocation();
  const [to, setTo] = useState('');
  const [from, setFrom] = useState('');
  const [parameters, setParameters] = useState('');
  const numbers = useQuery({
    queryKey: ['phone-numbers', workspace_id, 'all'],
    queryFn: () =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/phone-numbers', {
          params: { path: { workspace_id }, query: { limit: 100 } },
        }),
      ),
  });
  const start = useMutation({
    mutationFn: () => {
      const pairs = parameters
        .split('\n')
        .map((line) => line.split('='))
        .filter((pair) => pair.length >= 2 && pair[0].trim() !== '');
      return ok(
        api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call', {
          params: { path: { workspace_id, agent_id: agent.id } },
          body: {
            to_phone: to.trim(),
            from_phone: from || null,
            parameters: Object.fromEntries(
              pairs.map(([key, ...rest]) => [key.trim(), rest.join('=').trim()]),
            ),
          },
        }),
      );
    },
    onSuccess: (call) => route(`/calls/${call.id}`),
  });
  return (
    <form
      class="card"
      aria-label="Start a call"
      onSubmit={(event) => {
        event.preventDefault();
        start.mutate();
      }}
    >
      <h2>Start a call</h2>
      <div class="grid">
        <Field label="To phone" name="to_phone" error={start.error} hint="E.164, e.g. +61491570156">
          {(p) => (
            <input {...p} type="tel" value={to} onInput={(e) => setTo(e.currentTarget.value)} required />
          )}
        </Field>
        <Field label="From number" name="from_phone" error={start.error}>
          {(p) => (
            <select {...p} value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
              <option value="">The agent's number</option>
              {(numbers.data?.items ?? []).map((n) => (
                <option key={n.id} value={n.phone_number}>
                  {n.phone_number}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Parameters" name="parameters" error={start.error} hint="One name=value a line.">
        {(p) => (
          <textarea
            {...p}
            rows={3}
            value={parameters}
            onInput={(e) => setParameters(e.currentTarget.value)}
          />
        )}
      </Field>
      <FormError error={start.error} />
      <button type="submit" class="primary" disabled={start.isPending}>
        Start call
      </button>
    </form>
  );
}

export default function AgentDetail() {
  const workspace_id = useWorkspaceId();
  const { canWrite } = useSession();
  const { params } = useRoute();
  const agentId = params.id;
  const [chatting, setChatting] = useState(false);
  const agent = useQuery({
    queryKey: ['agent', workspace_id, agentId],
    queryFn: () => loadAgent(workspace_id, agentId),
  });
  useEffect(() => setChatting(false), [agentId]);
  if (agent.isPending) return <Loading />;
  if (agent.isError) return <ErrorState error={agent.error} retry={() => void agent.refetch()} />;
  return (
    <section>
      <PageHeader title={agent.data.name}>
        {canWrite && !chatting && (
          <button type="button" class="primary" onClick={() => setChatting(true)}>
            Test chat
          </button>
        )}
      </PageHeader>
      <p class="muted">
        {agent.data.phone_number ? `Answers ${agent.data.phone_number}` : 'No phone number yet'} ·{' '}
        <a href={`/calls?agent_id=${agent.data.id}`}>Calls</a>
      </p>
      {chatting && (
        <TestChat workspaceId={workspace_id} agentId={agentId} onClose={() => setChatting(false)} />
      )}
      <AnsweringSwitch agent={agent.data} />
      {canWrite && <StartCall agent={agent.data} />}
      <AgentForm key={agent.data.id} agent={agent.data} />
    </section>
  );
}
