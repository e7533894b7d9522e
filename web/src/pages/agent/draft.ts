import { ApiError, type ValidationIssue } from '../../api/client';
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

// ── Tools (docs/tools.md) ───────────────────────────────────────────────────────────────────────

export type ToolBody = NonNullable<AgentBody['tools']>[number];
export type SavedTool = Agent['tools'][number];
export type ToolType = ToolBody['type'];

/** What a stored header value reads back as: `••••` and its last 4 characters. */
export const HEADER_MASK_PREFIX = '••••';

export interface HeaderDraft {
  key: string;
  name: string;
  /** The stored value's mask as the API returned it (absent for a header added here). */
  stored?: string;
  /** A new value typed; empty with a `stored` mask: the stored value is kept (the mask is sent back). */
  value: string;
}

export interface ToolDraft {
  key: string;
  type: ToolType;
  /** The name the agent holds it under (Test and List tools run the saved tool); absent until saved. */
  savedName?: string;
  name: string;
  url: string;
  headers: HeaderDraft[];
  /** Empty: the default (8,000 ms). */
  timeoutMs: string;
  // Function tools:
  description: string;
  /** The JSON Schema, as typed. */
  parameters: string;
  /** JSON, as typed; empty: none. */
  staticArguments: string;
  speakDuring: string;
  speakOnFailure: string;
  // MCP servers:
  /** Comma-separated; empty: all the server's tools. */
  allowedTools: string;
}

const json = (value: unknown): string => JSON.stringify(value, null, 2);

export const DEFAULT_PARAMETERS = json({ type: 'object', properties: {}, required: [] });

export const newToolDraft = (type: ToolType): ToolDraft => ({
  key: draftKey(),
  type,
  name: '',
  url: '',
  headers: [],
  timeoutMs: '',
  description: '',
  parameters: type === 'function' ? DEFAULT_PARAMETERS : '',
  staticArguments: '',
  speakDuring: '',
  speakOnFailure: '',
  allowedTools: '',
});

export const toolDrafts = (tools: SavedTool[]): ToolDraft[] =>
  tools.map((tool) => ({
    ...newToolDraft(tool.type),
    savedName: tool.name,
    name: tool.name,
    url: tool.url,
    headers: Object.entries(tool.headers ?? {}).map(([name, stored]) => ({
      key: draftKey(),
      name,
      stored,
      value: '',
    })),
    timeoutMs: String(tool.timeout_ms),
    ...(tool.type === 'function'
      ? {
          description: tool.description,
          parameters: json(tool.parameters),
          staticArguments: tool.static_arguments ? json(tool.static_arguments) : '',
          speakDuring: tool.speak_during ?? '',
          speakOnFailure: tool.speak_on_failure ?? '',
        }
      : { allowedTools: (tool.allowed_tools ?? []).join(', ') }),
  }));

/** A JSON text's object, or why it is not one (the message shown at its field, nothing sent). */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'Must be a JSON object ({ … }).' };
  return { value: value as Record<string, unknown> };
}

/**
 * The headers to send: a typed value replaces the stored one; an untouched stored header sends its
 * mask back (the API keeps the stored value); a row with neither name nor value is left out.
 */
function headersBody(drafts: HeaderDraft[]): Record<string, string> | undefined {
  const rows = drafts.filter((h) => h.name.trim() !== '' || h.value !== '');
  if (rows.length === 0) return undefined;
  return Object.fromEntries(
    rows.map((h) => [h.name.trim(), h.value === '' && h.stored ? h.stored : h.value]),
  );
}

const optionalText = (text: string) => (text.trim() === '' ? undefined : text);
const timeoutBody = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The `tools` of the PATCH; JSON that does not parse is a problem at its field (`problems`). */
export function toolsBody(drafts: ToolDraft[], problems: ValidationIssue[]): ToolBody[] {
  return drafts.map((d, index): ToolBody => {
    const at = (field: string) => ['body', 'tools', index, field];
    const headers = headersBody(d.headers);
    const timeout_ms = timeoutBody(d.timeoutMs);
    if (d.type === 'mcp') {
      const allowed = d.allowedTools
        .split(/[,\n]/)
        .map((t) => t.trim())
        .filter(Boolean);
      return {
        type: 'mcp',
        name: d.name.trim(),
        url: d.url.trim(),
        ...(headers ? { headers } : {}),
        ...(allowed.length > 0 ? { allowed_tools: allowed } : {}),
        ...(timeout_ms !== undefined ? { timeout_ms } : {}),
      };
    }
    const parameters = parseJsonObject(d.parameters);
    if ('problem' in parameters)
      problems.push({ type: 'json_invalid', loc: at('parameters'), msg: parameters.problem });
    const statics = d.staticArguments.trim() === '' ? undefined : parseJsonObject(d.staticArguments);
    if (statics && 'problem' in statics)
      problems.push({ type: 'json_invalid', loc: at('static_arguments'), msg: statics.problem });
    const speak_during = optionalText(d.speakDuring);
    const speak_on_failure = optionalText(d.speakOnFailure);
    return {
      type: 'function',
      name: d.name.trim(),
      description: d.description,
      parameters: 'value' in parameters ? parameters.value : {},
      url: d.url.trim(),
      ...(headers ? { headers } : {}),
      ...(statics && 'value' in statics ? { static_arguments: statics.value } : {}),
      ...(timeout_ms !== undefined ? { timeout_ms } : {}),
      ...(speak_during !== undefined ? { speak_during } : {}),
      ...(speak_on_failure !== undefined ? { speak_on_failure } : {}),
    };
  });
}

// ── The draft ────────────────────────────────────────────────────────────────────────────────────

type Settings = Agent['settings'];
export type TransferMode = NonNullable<Agent['transfer']>['mode'];

/**
 * The transfer's part of the PATCH. `transfer` is the setting; `transfer_phone_number` (its older,
 * cold-only form) is kept equal to its number so that a reader of the older field still sees where
 * calls go. An agent that has only the older field and whose number and cold mode are untouched is
 * left as it is (saving another section does not rewrite it).
 */
export function transferBody(
  draft: AgentDraft,
  agent: Pick<Agent, 'transfer' | 'transfer_phone_number'>,
): Pick<AgentBody, 'transfer' | 'transfer_phone_number'> {
  const number = draft.transferNumber.trim();
  if (number === '') return { transfer: null, transfer_phone_number: null };
  const whisper = draft.transferWhisper.trim();
  if (
    agent.transfer === null &&
    draft.transferMode === 'cold' &&
    number === (agent.transfer_phone_number ?? '')
  )
    return {};
  return {
    transfer: {
      phone_number: number,
      mode: draft.transferMode,
      ...(draft.transferMode === 'warm' && whisper !== '' ? { whisper } : {}),
    },
    transfer_phone_number: number,
  };
}

export interface AgentDraft {
  name: string;
  prompt: string;
  greeting: string;
  voice: string;
  language: string;
  speechSpeed: Settings['speech_speed'];
  expressiveness: Settings['expressiveness'];
  ambientNoise: Settings['ambient_noise'];
  /** The transfer's number; empty: the agent cannot transfer. */
  transferNumber: string;
  transferMode: TransferMode;
  /** Warm only: what the person hears first; empty: the summary alone. */
  transferWhisper: string;
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
  tools: ToolDraft[];
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
    transferNumber: agent.transfer?.phone_number ?? agent.transfer_phone_number ?? '',
    transferMode: agent.transfer?.mode ?? 'cold',
    transferWhisper: agent.transfer?.whisper ?? '',
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
    tools: toolDrafts(agent.tools),
    newActionType: 'webhook',
  };
}

export type DraftEvent =
  | { type: 'edit'; change: Partial<AgentDraft> }
  /**
   * Saved: the draft is the saved agent's (new actions have their ids now: sending them again keeps
   * them, "Send test payload" needs them; tools are as the API holds them, header values masked), so
   * the Save bar counts no change.
   */
  | { type: 'saved'; agent: Agent }
  /** Discard: the saved agent's draft again. */
  | { type: 'reset'; agent: Agent };

export function draftReducer(draft: AgentDraft, event: DraftEvent): AgentDraft {
  switch (event.type) {
    case 'edit':
      return { ...draft, ...event.change };
    case 'saved':
      // The agent as the API holds it now: lists with their ids, header values masked, values as stored.
      return { ...draftOf(event.agent), newActionType: draft.newActionType };
    case 'reset':
      return draftOf(event.agent);
  }
}

/**
 * The PATCH body of the whole form. Throws a 422-shaped ApiError (shown at the fields it names, and
 * nothing is sent) when a tool's JSON does not parse.
 */
export function toBody(draft: AgentDraft, agent: Agent): AgentBody {
  const problems: ValidationIssue[] = [];
  const tools = toolsBody(draft.tools, problems);
  if (problems.length > 0) throw new ApiError(422, 'Some fields need attention.', problems);
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
    ...transferBody(draft, agent),
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
    tools,
  };
}

/**
 * What the form sends: only the fields the user changed (`body` against `base`, the body of the saved
 * agent's own draft; settings key by key, as the API merges them). A save then makes a version whose
 * `changed` names what was edited, never a field the form merely restated (an absent list sent as
 * `[]`, the default language), and a save of nothing changes nothing.
 */
export function changedFields(body: AgentBody, base: AgentBody): AgentBody {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body) as [keyof AgentBody, unknown][]) {
    if (key === 'settings') {
      const before = (base.settings ?? {}) as Record<string, unknown>;
      const settings = Object.fromEntries(
        Object.entries(body.settings ?? {}).filter(([name, v]) => !same(v, before[name])),
      );
      if (Object.keys(settings).length > 0) changes.settings = settings;
    } else if (!same(value, base[key])) changes[key] = value;
  }
  return changes as AgentBody;
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
