import { agentForCall } from '../agents/versions.js';
import { getCallFacts, setCallSentiment } from '../calling/service.js';
import { listingAddress } from '../knowledge/service.js';
import type { AnalysisField } from './call-analysis.js';
import type { ActionType } from './entities.js';
import type { CallFacts } from './payload.js';

/**
 * The pipeline's view of the calling core: an ended call's facts and the agent's post-call actions.
 * Only this file knows the calling core's record shapes.
 */

export interface ConfiguredAction {
  actionId: string;
  type: ActionType;
  config: Record<string, unknown>;
}

const stringRecord = (value: unknown): Record<string, string> => {
  if (!value || typeof value !== 'object') return {};
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>))
    if (typeof v === 'string') out[key] = v;
  return out;
};

/** The call, when it exists and has ended (completed or failed); otherwise undefined. */
export async function loadEndedCall(
  workspaceId: string,
  callId: string,
): Promise<{ facts: CallFacts } | { notEnded: true } | undefined> {
  const call = await getCallFacts(workspaceId, callId);
  if (!call) return undefined;
  if (call.status !== 'completed' && call.status !== 'failed') return { notEnded: true };
  const transcript = (call.transcript ?? []) as {
    role: 'agent' | 'user';
    text: string;
    offsetSeconds: number;
  }[];
  const listings = (call.quotedListings ?? []) as { listingId: string; address: string; price: string }[];
  const facts: CallFacts = {
    callId: call.callId,
    workspaceId: call.workspaceId,
    organisationId: call.organisationId,
    agentId: call.agentId,
    agentName: call.agentName,
    ...(call.agentVersion !== undefined ? { agentVersion: call.agentVersion } : {}),
    direction: call.direction,
    status: call.status,
    endReason: call.endReason,
    fromPhone: call.fromPhone,
    toPhone: call.toPhone,
    createdBy: call.createdBy,
    createdAt: call.createdAt,
    contactId: call.contactId,
    connectedAt: call.connectedAt ?? call.inprogressAt,
    endedAt: call.endedAt,
    durationSeconds: call.durationSeconds,
    parameters: stringRecord(call.parameters),
    transcript: transcript.map((turn) => ({
      role: turn.role,
      text: turn.text,
      offsetSeconds: turn.offsetSeconds,
    })),
    recordingKey: call.recordingKey,
    recordingDurationSeconds: call.recordingDurationSeconds,
    shortCode: call.shortCode,
    answeredBy: answeredByOf(call),
    voicemailMessageLeft: call.voicemailMessageLeft === true,
    ...(call.transfer ? { transfer: call.transfer } : {}),
    // A test chat runs the agent's post-call actions only when its ticket asked (web-chat.ts).
    ...(call.channel === 'web' && call.runPostCallActions !== true ? { skipActions: true } : {}),
    quotedListings: await withFullAddresses(
      call.workspaceId,
      listings.map((l) => ({ listingId: l.listingId, address: l.address, price: l.price })),
    ),
  };
  return { facts };
}

/** Who answered: the detection's result; an inbound call's caller is a person; else not known. */
const answeredByOf = (call: {
  answeredBy?: 'human' | 'machine' | 'unknown';
  direction: 'inbound' | 'outbound';
}): 'human' | 'machine' | 'unknown' =>
  call.answeredBy ?? (call.direction === 'inbound' ? 'human' : 'unknown');

/**
 * A quoted listing's address is its full address from the workspace's listings knowledge base (by
 * item id or external id) when a base holds it; otherwise what the agent said.
 */
async function withFullAddresses(
  workspaceId: string,
  listings: { listingId: string; address: string; price: string }[],
): Promise<{ listingId: string; address: string; price: string }[]> {
  return Promise.all(
    listings.map(async (listing) => ({
      ...listing,
      address: (await listingAddress(workspaceId, listing.listingId)) ?? listing.address,
    })),
  );
}

/** Stores the call's sentiment and analysis on the call, for the call detail of the calls API. */
export async function storeAnalysis(
  workspaceId: string,
  callId: string,
  sentiment: unknown,
  analysis: unknown,
): Promise<void> {
  await setCallSentiment(workspaceId, callId, sentiment, analysis ?? undefined);
}

/** The agent's actions (all of them, enabled or not), or undefined when the agent is gone. */
export async function loadAgentActions(
  workspaceId: string,
  agentId: string,
  /** The call's version of the agent: its actions, analysis fields and criteria as the call ran them. */
  agentVersion?: number,
): Promise<
  | {
      agentName: string;
      organisationId: string;
      prompt: string;
      successCriteria?: string;
      analysisFields: AnalysisField[];
      actions: (ConfiguredAction & { enabled: boolean })[];
    }
  | undefined
> {
  const agent = await agentForCall({ workspaceId, agentId, agentVersion });
  if (!agent) return undefined;
  const actions = (agent.postCallActions ?? []) as {
    actionId: string;
    type: ActionType;
    enabled: boolean;
    config?: unknown;
  }[];
  return {
    agentName: agent.name,
    organisationId: agent.organisationId,
    prompt: agent.prompt,
    successCriteria: agent.successCriteria,
    analysisFields: (agent.analysisFields ?? []).map((field) => ({
      name: field.name,
      type: field.type,
      description: field.description,
      ...(field.enumValues ? { enumValues: field.enumValues } : {}),
    })),
    actions: actions.map((action) => ({
      actionId: action.actionId,
      type: action.type,
      enabled: action.enabled,
      config: (action.config && typeof action.config === 'object' ? action.config : {}) as Record<
        string,
        unknown
      >,
    })),
  };
}
