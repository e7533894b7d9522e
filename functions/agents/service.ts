import * as z from 'zod';
import { WorkspaceEntity } from '../access/entities.js';
import { isConditionFailure } from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { parseOrThrow } from '../platform/validation.js';
import { PII_CATEGORIES, isPiiCategory, type PiiCategory } from '../platform/pii/categories.js';
import {
  AgentEntity,
  agentService,
  DEFAULT_AGENT_LANGUAGE,
  DEFAULT_MAX_DURATION_SECONDS,
  type Agent,
  type AgentSettings,
} from './entities.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import {
  missingSecrets,
  prepareTools,
  retainedSecrets,
  storedSecrets,
  storedTools,
  toolsToWire,
} from './tool-definitions.js';
import { handoffsFrom, handoffsToWire, requireHandoffTargets } from './handoffs.js';
import {
  AGENT_VERSION_NOT_FOUND,
  changedFields,
  fieldsToRemove,
  findAgentVersion,
  versionedFields,
  versionItem,
  type VersionedFields,
} from './versions.js';
import type {
  AnalysisFieldInput,
  CreateAgentBody,
  UpdateAgentBody,
  AgentResponse,
  PostCallActionInput,
  SettingsInput,
} from './schemas.js';

/** Agents: their prompt, greeting, runtime settings, post-call actions and the Answering-calls switch. */
export const AGENT_NOT_FOUND = 'Agent not found';

export function defaultSettings(timezone: string): AgentSettings {
  return {
    speechSpeed: 'medium',
    expressiveness: 'natural',
    ambientNoise: 'none',
    callRecording: true,
    interruptible: true,
    callerGrowthLoop: false,
    conversationMemories: false,
    timezone,
    specialisedTerms: [],
    maxDurationSeconds: DEFAULT_MAX_DURATION_SECONDS,
  };
}

/** The settings after applying the fields the caller sent. */
export function mergeSettings(base: AgentSettings, input: SettingsInput | undefined): AgentSettings {
  if (!input) return base;
  return {
    speechSpeed: input.speech_speed ?? base.speechSpeed,
    expressiveness: input.expressiveness ?? base.expressiveness,
    ambientNoise: input.ambient_noise ?? base.ambientNoise,
    callRecording: input.call_recording ?? base.callRecording,
    interruptible: input.interruptible ?? base.interruptible,
    callerGrowthLoop: input.caller_growth_loop ?? base.callerGrowthLoop,
    conversationMemories: input.conversation_memories ?? base.conversationMemories ?? false,
    timezone: input.timezone ?? base.timezone,
    specialisedTerms: input.specialised_terms ?? base.specialisedTerms,
    maxDurationSeconds: input.max_duration_seconds ?? base.maxDurationSeconds,
  };
}

/** Post-call actions as stored: every action has an id (`act_…`, assigned here when absent). */
export function actionsFrom(input: PostCallActionInput[]): Agent['postCallActions'] {
  return input.map((action) => ({
    actionId: action.id ?? newId('action'),
    type: action.type,
    enabled: action.enabled,
    config: action.config,
  }));
}

/**
 * Whether the agent takes inbound calls now: switched on, and its organisation's agents not suspended
 * by billing (`suspendedByBilling`: billing's `agentsSuspended`, read from the billing account).
 */
export const isAnswering = (agent: Pick<Agent, 'answeringCalls'>, suspendedByBilling: boolean): boolean =>
  agent.answeringCalls && !suspendedByBilling;

/** The agent as the API shows it; `suspendedByBilling` is billing's `agentsSuspended` for its organisation. */
export function toAgentResponse(agent: Agent, suspendedByBilling: boolean): z.infer<typeof AgentResponse> {
  const s = agent.settings;
  return {
    id: agent.agentId,
    workspace_id: agent.workspaceId,
    name: agent.name,
    prompt: agent.prompt,
    greeting: agent.greeting,
    answering_calls: isAnswering(agent, suspendedByBilling),
    suspended_by_billing: suspendedByBilling,
    phone_number: agent.phoneNumber ?? null,
    phone_number_id: agent.phoneNumberId ?? null,
    settings: {
      speech_speed: s.speechSpeed,
      expressiveness: s.expressiveness,
      ambient_noise: s.ambientNoise,
      call_recording: s.callRecording,
      interruptible: s.interruptible,
      caller_growth_loop: s.callerGrowthLoop,
      conversation_memories: s.conversationMemories ?? false,
      timezone: s.timezone,
      specialised_terms: s.specialisedTerms,
      max_duration_seconds: s.maxDurationSeconds,
    },
    post_call_actions: (agent.postCallActions ?? []).map((a: Agent['postCallActions'][number]) => ({
      id: a.actionId,
      type: a.type,
      enabled: a.enabled,
      config: (a.config ?? {}) as Record<string, unknown>,
    })),
    knowledge_base_ids: agent.knowledgeBaseIds ?? [],
    language: agent.language ?? DEFAULT_AGENT_LANGUAGE,
    voice: agent.voice ?? null,
    transfer_phone_number: agent.transferPhoneNumber ?? null,
    voicemail: agent.voicemail
      ? {
          detection: agent.voicemail.detection,
          action: agent.voicemail.action,
          message: agent.voicemail.message ?? null,
        }
      : null,
    transfer: agent.transfer
      ? {
          phone_number: agent.transfer.phoneNumber,
          mode: agent.transfer.mode,
          whisper: agent.transfer.whisper ?? null,
        }
      : null,
    analysis_fields: (agent.analysisFields ?? []).map((field) => ({
      name: field.name,
      type: field.type,
      description: field.description,
      ...(field.enumValues ? { enum_values: field.enumValues } : {}),
    })),
    success_criteria: agent.successCriteria ?? null,
    pii_redaction: piiRedactionOf(agent),
    tools: toolsToWire(agent),
    handoffs: handoffsToWire(agent),
    version: agent.version ?? null,
    created_by: agent.createdBy,
    created_at: agent.createdAt,
    updated_at: agent.updatedAt ?? null,
  };
}

/**
 * Creates an agent in a workspace (also the CLI seed's entry point: the input is validated here as it
 * is on the HTTP route). The timezone defaults to the workspace's.
 */
export async function createAgent(
  workspaceId: string,
  organisationId: string,
  input: CreateAgentBody,
  options: { createdBy?: string; workspaceTimezone?: string } = {},
): Promise<Agent> {
  // The request schemas are built by the first create or update (not by every reader of agents).
  const { CreateAgentBody } = await import('./schemas.js');
  const body = parseOrThrow(CreateAgentBody, input, 'body');
  let timezone = options.workspaceTimezone;
  if (timezone === undefined) {
    const { data: workspace } = await WorkspaceEntity.get({ workspaceId }).go();
    if (!workspace || workspace.deletedAt || workspace.organisationId !== organisationId)
      throw notFound('Workspace');
    timezone = workspace.timezone;
  }
  await requireHandoffTargets(workspaceId, undefined, body.handoffs);
  const agentId = newId('agent');
  const handoffs = handoffsFrom(body.handoffs ?? []);
  const tools = body.tools?.length ? await prepareTools(body.tools, { workspaceId, agentId }) : undefined;
  const agent: Agent = {
    workspaceId,
    agentId,
    organisationId,
    name: body.name,
    prompt: body.prompt,
    greeting: body.greeting,
    answeringCalls: body.answering_calls,
    settings: mergeSettings(defaultSettings(timezone), body.settings),
    postCallActions: actionsFrom(body.post_call_actions ?? []),
    ...(body.knowledge_base_ids?.length ? { knowledgeBaseIds: body.knowledge_base_ids } : {}),
    ...(body.language ? { language: body.language } : {}),
    ...(body.voice ? { voice: body.voice } : {}),
    ...(body.transfer_phone_number ? { transferPhoneNumber: body.transfer_phone_number } : {}),
    ...(body.voicemail ? { voicemail: voicemailFrom(body.voicemail) } : {}),
    ...(body.transfer ? { transfer: transferFrom(body.transfer) } : {}),
    ...(body.analysis_fields?.length ? { analysisFields: analysisFieldsFrom(body.analysis_fields) } : {}),
    ...(body.success_criteria ? { successCriteria: body.success_criteria } : {}),
    ...(body.pii_redaction ? { piiRedaction: piiRedactionFrom(body.pii_redaction) } : {}),
    ...(tools ?? {}),
    ...(handoffs ? { handoffs } : {}),
    version: 1,
    createdBy: options.createdBy ?? 'system',
    createdAt: clock.now().toISOString(),
  };
  // The agent and its version 1, together.
  const fields = versionedFields(agent);
  const version = versionItem(agent, 1, fields, changedFields({}, fields), agent.createdBy);
  const result = await agentService.transaction
    .write(({ agent: agents, agentVersion }) => [
      agents.create(agent).commit(),
      agentVersion.create(version).commit(),
    ])
    .go();
  if (result.canceled) throw new Error('agent creation cancelled');
  return agent;
}

/** The agent, or undefined (an id of the wrong shape is simply not found). */
export async function findAgent(
  workspaceId: string,
  agentId: string,
  options: { consistent?: boolean } = {},
): Promise<Agent | undefined> {
  if (!isId('agent', agentId)) return undefined;
  const { data } = await AgentEntity.get({ workspaceId, agentId }).go({ consistent: options.consistent });
  return data ?? undefined;
}

export async function getAgent(workspaceId: string, agentId: string): Promise<Agent> {
  const agent = await findAgent(workspaceId, agentId);
  if (!agent) throw notFound(AGENT_NOT_FOUND);
  return agent;
}

export async function listAgents(workspaceId: string, query: ListQuery): Promise<Page<Agent>> {
  const page = await queryPage(query.cursor, (cursor) =>
    AgentEntity.query.byWorkspace({ workspaceId }).go({ count: query.limit, cursor }),
  );
  return { items: page.items as Agent[], nextCursor: page.nextCursor };
}

/** The fields of the agent item a PATCH may remove. */
type RemovableField =
  | 'voice'
  | 'transferPhoneNumber'
  | 'successCriteria'
  | 'voicemail'
  | 'transfer'
  | 'handoffs'
  | 'piiRedaction';

/** The agent's PII redaction as stored (categories absent: all; recordings absent: keep). */
function piiRedactionFrom(input: {
  enabled: boolean;
  categories?: PiiCategory[];
  recordings?: 'keep' | 'drop';
}): NonNullable<Agent['piiRedaction']> {
  return {
    enabled: input.enabled,
    ...(input.categories ? { categories: input.categories } : {}),
    ...(input.recordings ? { recordings: input.recordings } : {}),
  };
}

/** The setting on the wire, defaults filled. */
export function piiRedactionOf(agent: Pick<Agent, 'piiRedaction'>): {
  enabled: boolean;
  categories: PiiCategory[];
  recordings: 'keep' | 'drop';
} {
  const setting = agent.piiRedaction;
  return {
    enabled: setting?.enabled ?? false,
    categories: (setting?.categories ?? [...PII_CATEGORIES]).filter(isPiiCategory),
    recordings: setting?.recordings ?? 'keep',
  };
}

function voicemailFrom(input: {
  detection?: boolean;
  action?: 'hangup' | 'leave_message';
  message?: string;
}): NonNullable<Agent['voicemail']> {
  const action = input.action ?? 'hangup';
  return {
    detection: input.detection ?? true,
    action,
    ...(input.message ? { message: input.message } : {}),
  };
}

function transferFrom(input: {
  phone_number: string;
  mode?: 'cold' | 'warm';
  whisper?: string;
}): NonNullable<Agent['transfer']> {
  return {
    phoneNumber: input.phone_number,
    mode: input.mode ?? 'cold',
    ...(input.whisper ? { whisper: input.whisper } : {}),
  };
}

function analysisFieldsFrom(fields: AnalysisFieldInput[]): NonNullable<Agent['analysisFields']> {
  return fields.map((field) => ({
    name: field.name,
    type: field.type,
    description: field.description,
    ...(field.enum_values ? { enumValues: field.enum_values } : {}),
  }));
}

/** How often a change is tried again after a concurrent change of the same agent. */
const MAX_WRITE_ATTEMPTS = 8;

const pause = (attempt: number) =>
  new Promise((resolvePause) => setTimeout(resolvePause, 5 + Math.floor(Math.random() * 20 * (attempt + 1))));

/**
 * Applies the fields sent; settings are merged field by field, post-call actions replaced. A change of
 * the agent's own fields makes a new version (agents/versions.ts): the agent is read, changed in
 * memory, and written with its version item in one transaction conditioned on the version read; a
 * concurrent change makes it read and try again, so neither is lost. `answering_calls` alone, or a
 * PATCH that changes none of the agent's own fields, makes no version.
 */
export async function updateAgent(
  workspaceId: string,
  agentId: string,
  input: UpdateAgentBody,
  options: { actor?: string } = {},
): Promise<Agent> {
  const { UpdateAgentBody } = await import('./schemas.js');
  const changes = parseOrThrow(UpdateAgentBody, input, 'body');
  if (!isId('agent', agentId)) throw notFound(AGENT_NOT_FOUND);
  await requireHandoffTargets(workspaceId, agentId, changes.handoffs);
  const set: Partial<Agent> = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.prompt !== undefined) set.prompt = changes.prompt;
  if (changes.greeting !== undefined) set.greeting = changes.greeting;
  if (changes.post_call_actions !== undefined) set.postCallActions = actionsFrom(changes.post_call_actions);
  if (changes.knowledge_base_ids !== undefined) set.knowledgeBaseIds = changes.knowledge_base_ids;
  if (changes.language !== undefined) set.language = changes.language;
  if (changes.voice) set.voice = changes.voice;
  if (changes.transfer_phone_number) set.transferPhoneNumber = changes.transfer_phone_number;
  if (changes.voicemail) set.voicemail = voicemailFrom(changes.voicemail);
  if (changes.transfer) set.transfer = transferFrom(changes.transfer);
  if (changes.analysis_fields !== undefined) set.analysisFields = analysisFieldsFrom(changes.analysis_fields);
  if (changes.success_criteria) set.successCriteria = changes.success_criteria;
  const handoffs = changes.handoffs !== undefined ? handoffsFrom(changes.handoffs) : undefined;
  if (handoffs) set.handoffs = handoffs;
  if (changes.pii_redaction) set.piiRedaction = piiRedactionFrom(changes.pii_redaction);
  const removed: RemovableField[] = [];
  if (changes.handoffs !== undefined && !handoffs) removed.push('handoffs');
  if (changes.voicemail === null) removed.push('voicemail');
  if (changes.transfer === null) removed.push('transfer');
  if (changes.voice === null) removed.push('voice');
  if (changes.transfer_phone_number === null) removed.push('transferPhoneNumber');
  if (changes.success_criteria === null || changes.success_criteria === '') removed.push('successCriteria');
  if (changes.pii_redaction === null) removed.push('piiRedaction');
  const settings = changes.settings ?? {};
  for (let attempt = 0; ; attempt += 1) {
    const current = await findAgent(workspaceId, agentId, { consistent: true });
    if (!current) throw notFound(AGENT_NOT_FOUND);
    // New tools resolve their masked header values against the tools read here (a value sent again
    // keeps its id). Values the tools no longer refer to stay within a budget, for earlier versions.
    let tools: Pick<Agent, 'tools' | 'toolSecrets'> = {};
    if (changes.tools !== undefined) {
      const prepared = await prepareTools(changes.tools, current);
      tools = {
        tools: prepared.tools,
        toolSecrets: retainedSecrets(prepared.tools, { ...storedSecrets(current), ...prepared.toolSecrets }),
      };
    }
    const next: Agent = {
      ...current,
      ...set,
      ...tools,
      settings: mergeSettings(current.settings, settings),
    };
    for (const field of removed) delete next[field];
    const before = versionedFields(current);
    const after = versionedFields(next);
    const changed = changedFields(before, after);
    const version = (current.version ?? 0) + 1;
    const own = changed.length > 0;
    if (!own && changes.answering_calls === undefined) return current;
    try {
      const result = await agentService.transaction
        .write(({ agent: agents, agentVersion }) => [
          own
            ? agents
                .patch({ workspaceId, agentId })
                .set({
                  ...versionedSet(after),
                  ...(tools.toolSecrets ? { toolSecrets: tools.toolSecrets } : {}),
                  ...(changes.answering_calls !== undefined
                    ? { answeringCalls: changes.answering_calls }
                    : {}),
                  version,
                  updatedAt: clock.now().toISOString(),
                })
                .remove(fieldsToRemove(current, after) as RemovableField[])
                .where((attr, op) =>
                  current.version === undefined
                    ? op.notExists(attr.version)
                    : op.eq(attr.version, current.version),
                )
                .commit()
            : // The switch alone: no version, no condition on one.
              agents
                .patch({ workspaceId, agentId })
                .set({ answeringCalls: changes.answering_calls, updatedAt: clock.now().toISOString() })
                .commit(),
          ...(own
            ? [
                agentVersion
                  .create(versionItem(current, version, after, changed, options.actor ?? 'system'))
                  .commit(),
              ]
            : []),
        ])
        .go();
      if (!result.canceled) {
        const written = await findAgent(workspaceId, agentId, { consistent: true });
        if (!written) throw notFound(AGENT_NOT_FOUND);
        return written;
      }
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    if (attempt + 1 >= MAX_WRITE_ATTEMPTS) throw conflict('The agent changed meanwhile; try again');
    await pause(attempt);
  }
}

/** The agent item's own fields to set for a version's fields (the item's keys are never set). */
function versionedSet(fields: VersionedFields): Partial<Agent> {
  return fields as Partial<Agent>;
}

/**
 * Restores version `n`: a new version equal to it (its `changed` says what differs from the agent
 * before). `answering_calls` and the connected number are left as they are. Conditioned on the
 * version read, like a PATCH.
 */
export async function restoreAgentVersion(
  workspaceId: string,
  agentId: string,
  n: number,
  options: { actor?: string } = {},
): Promise<Agent> {
  for (let attempt = 0; ; attempt += 1) {
    const current = await findAgent(workspaceId, agentId, { consistent: true });
    if (!current) throw notFound(AGENT_NOT_FOUND);
    const restored = await findAgentVersion(workspaceId, agentId, n);
    if (!restored) throw notFound(AGENT_VERSION_NOT_FOUND);
    const fields = restored.agent as VersionedFields;
    const restoredTools = storedTools(fields);
    if (missingSecrets(restoredTools, storedSecrets(current)).length > 0)
      throw conflict(
        `Version ${n} uses tool header values that are no longer kept; set the tools' headers again instead`,
      );
    const version = (current.version ?? 0) + 1;
    const result = await agentService.transaction
      .write(({ agent: agents, agentVersion }) => [
        agents
          .patch({ workspaceId, agentId })
          .set({
            ...versionedSet(fields),
            toolSecrets: retainedSecrets(restoredTools, storedSecrets(current)),
            version,
            updatedAt: clock.now().toISOString(),
          })
          .remove(fieldsToRemove(current, fields) as RemovableField[])
          .where((attr, op) =>
            current.version === undefined ? op.notExists(attr.version) : op.eq(attr.version, current.version),
          )
          .commit(),
        agentVersion
          .create(
            versionItem(
              current,
              version,
              fields,
              changedFields(versionedFields(current), fields),
              options.actor ?? 'system',
              n,
            ),
          )
          .commit(),
      ])
      .go()
      .catch((error: unknown) => {
        if (isConditionFailure(error)) return { canceled: true as const };
        throw error;
      });
    if (!result.canceled) {
      const written = await findAgent(workspaceId, agentId, { consistent: true });
      if (!written) throw notFound(AGENT_NOT_FOUND);
      return written;
    }
    if (attempt + 1 >= MAX_WRITE_ATTEMPTS) throw conflict('The agent changed meanwhile; try again');
    await pause(attempt);
  }
}
