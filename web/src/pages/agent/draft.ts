import type { Agent, AgentBody } from '../../api/queries/agents';

/**
 * The agent form's draft: everything the form edits, as its inputs hold it (numbers and lists as the
 * text typed), in one reducer; `toBody` turns it into the one PATCH the form sends (the API replaces
 * the lists whole). Each section of the form edits its fields of it through `SectionProps`.
 */

export type AnalysisField = NonNullable<AgentBody['analysis_fields']>[number];
export type ActionType = NonNullable<AgentBody['post_call_actions']>[number]['type'];

let draftKeys = 0;
/** A list item's key while it is edited (items have no id before they are saved). */
export const draftKey = (): string => `draft-${(draftKeys += 1)}`;

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

// ── Post-call actions ───────────────────────────────────────────────────────────────────────────

export interface ActionDraft {
  key: string;
  /** Absent until the agent is saved with it. */
  id?: string;
  type: ActionType;
  enabled: boolean;
  config: Record<string, unknown>;
}

export const actionDrafts = (
  actions: { id: string; type: ActionType; enabled: boolean; config: Record<string, unknown> }[],
): ActionDraft[] => actions.map((a) => ({ key: draftKey(), ...a, config: { ...a.config } }));

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

// ── The draft ────────────────────────────────────────────────────────────────────────────────────

type Settings = Agent['settings'];

export interface AgentDraft {
  name: string;
  prompt: string;
  greeting: string;
  voice: string;
  language: string;
  speechSpeed: Settings['speech_speed'];
  expressiveness: Settings['expressiveness'];
  ambientNoise: Settings['ambient_noise'];
  transfer: string;
  voicemailOn: boolean;
  voicemailAction: 'hangup' | 'leave_message';
  voicemailMessage: string;
  timezone: string;
  maxDuration: string;
  recording: boolean;
  interruptible: boolean;
  growthLoop: boolean;
  memories: boolean;
  /** One a line. */
  terms: string;
  knowledgeBases: string[];
  successCriteria: string;
  fields: AnalysisFieldDraft[];
  actions: ActionDraft[];
  /** The type the "Add action" button adds (not sent). */
  newActionType: ActionType;
}

export function draftOf(agent: Agent): AgentDraft {
  return {
    name: agent.name,
    prompt: agent.prompt,
    greeting: agent.greeting,
    voice: agent.voice ?? '',
    language: agent.language,
    speechSpeed: agent.settings.speech_speed,
    expressiveness: agent.settings.expressiveness,
    ambientNoise: agent.settings.ambient_noise,
    transfer: agent.transfer_phone_number ?? '',
    voicemailOn: agent.voicemail?.detection ?? false,
    voicemailAction: agent.voicemail?.action ?? 'hangup',
    voicemailMessage: agent.voicemail?.message ?? '',
    timezone: agent.settings.timezone,
    maxDuration: String(agent.settings.max_duration_seconds),
    recording: agent.settings.call_recording,
    interruptible: agent.settings.interruptible,
    growthLoop: agent.settings.caller_growth_loop,
    memories: agent.settings.conversation_memories,
    terms: agent.settings.specialised_terms.join('\n'),
    knowledgeBases: agent.knowledge_base_ids,
    successCriteria: agent.success_criteria ?? '',
    fields: analysisFieldDrafts(agent.analysis_fields),
    actions: actionDrafts(agent.post_call_actions),
    newActionType: 'webhook',
  };
}

export type DraftEvent =
  | { type: 'edit'; change: Partial<AgentDraft> }
  /** Saved: new actions have their ids now (sending them again keeps them, "Send test payload" needs them). */
  | { type: 'saved'; agent: Agent };

export function draftReducer(draft: AgentDraft, event: DraftEvent): AgentDraft {
  switch (event.type) {
    case 'edit':
      return { ...draft, ...event.change };
    case 'saved':
      return {
        ...draft,
        actions: actionDrafts(event.agent.post_call_actions),
        fields: analysisFieldDrafts(event.agent.analysis_fields),
      };
  }
}

/** The PATCH body of the whole form. */
export function toBody(draft: AgentDraft): AgentBody {
  return {
    name: draft.name,
    prompt: draft.prompt,
    greeting: draft.greeting,
    settings: {
      speech_speed: draft.speechSpeed,
      expressiveness: draft.expressiveness,
      ambient_noise: draft.ambientNoise,
      timezone: draft.timezone,
      max_duration_seconds: Number(draft.maxDuration),
      call_recording: draft.recording,
      interruptible: draft.interruptible,
      caller_growth_loop: draft.growthLoop,
      conversation_memories: draft.memories,
      specialised_terms: draft.terms
        .split('\n')
        .map((t) => t.trim())
        .filter(Boolean),
    },
    voice: draft.voice.trim() || null,
    language: draft.language.trim(),
    transfer_phone_number: draft.transfer.trim() || null,
    voicemail: draft.voicemailOn
      ? {
          action: draft.voicemailAction,
          ...(draft.voicemailAction === 'leave_message' ? { message: draft.voicemailMessage.trim() } : {}),
        }
      : null,
    knowledge_base_ids: draft.knowledgeBases,
    success_criteria: draft.successCriteria.trim() || null,
    analysis_fields: analysisFieldsBody(draft.fields),
    post_call_actions: actionsBody(draft.actions),
  };
}

// ── The sections ────────────────────────────────────────────────────────────────────────────────

/** What each section of the agent form is given: the saved agent, the draft, and the save's error. */
export interface SectionProps {
  agent: Agent;
  workspaceId: string;
  draft: AgentDraft;
  edit: (change: Partial<AgentDraft>) => void;
  /** The last save's error: its 422 messages show next to the fields they name. */
  error: unknown;
  canWrite: boolean;
}
