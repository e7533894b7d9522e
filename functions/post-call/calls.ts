import { agentAsOf } from '../agents/versions.js';
import { AgentEntity, AgentVersionEntity, type Agent } from '../agents/entities.js';
import { setCallSentiment } from '../calling/service.js';
import { CallEntity, type Call } from '../calling/entities.js';
import { callHandoffs } from '../calling/handoffs.js';
import { getContact, findContactByPhone, normalisePhone } from '../contacts/lookup.js';
import { ContactEntity, ContactPhoneEntity, type Contact } from '../contacts/entities.js';
import { listingAddress } from '../knowledge/service.js';
import { isId } from '../platform/ids.js';
import { batchGetStoredItems, entityKey, type StoredItem, type TableKey } from '../platform/table.js';
import type { AnalysisField } from './call-analysis.js';
import type { ActionType } from './entities.js';
import { otherParty, type CallFacts, type ContactFacts } from './payload.js';
import { callKey as shardedCallKey } from '../calling/call-shards.js';

/**
 * The pipeline's view of the calling core: an ended call's facts, the agent's post-call actions and
 * the call's contact. Only this file knows the calling core's record shapes. The pipeline reads them
 * in two requests (batchGetStoredItems): the call with the post-call record, then the agent (the
 * call's version of it) with the contact.
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

/** The call's key on the table (undefined for an id that is no call's: there is no such call). */
export const callKey = (workspaceId: string, callId: string): TableKey | undefined =>
  isId('call', callId) ? entityKey(CallEntity.get(shardedCallKey(workspaceId, callId)).params()) : undefined;

/** The call as read with callKey; undefined when there is none. */
export const callOf = (item: StoredItem | undefined): Call | undefined =>
  item ? ((CallEntity.parse({ Item: item }).data as Call | null) ?? undefined) : undefined;

/** The call read with callKey, when it exists and has ended (completed or failed); otherwise undefined. */
export async function endedCall(
  item: StoredItem | undefined,
): Promise<{ facts: CallFacts } | { notEnded: true } | undefined> {
  const call = callOf(item);
  if (!call) return undefined;
  if (call.status !== 'completed' && call.status !== 'failed') return { notEnded: true };
  const transcript = (call.transcript ?? []) as {
    role: 'agent' | 'user';
    text: string;
    offsetSeconds: number;
    agentId?: string;
  }[];
  const handedOver = callHandoffs(call);
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
      ...(turn.role === 'agent' && turn.agentId ? { agentId: turn.agentId } : {}),
    })),
    activeAgentId: handedOver.active_agent_id,
    handoffs: handedOver.handoffs,
    recordingKey: call.recordingKey,
    recordingDurationSeconds: call.recordingDurationSeconds,
    shortCode: call.shortCode,
    answeredBy: answeredByOf(call),
    voicemailMessageLeft: call.voicemailMessageLeft === true,
    ...(call.transfer ? { transfer: call.transfer } : {}),
    ...(call.piiRedacted ? { piiRedacted: true } : {}),
    ...(call.piiRedaction ? { piiRedaction: call.piiRedaction } : {}),
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
  /** The call as just read with the record (consistently): not read again. */
  read?: Call,
): Promise<void> {
  await setCallSentiment(workspaceId, callId, sentiment, analysis ?? undefined, read);
}

export interface AgentActions {
  agentName: string;
  organisationId: string;
  prompt: string;
  successCriteria?: string;
  analysisFields: AnalysisField[];
  /** All of them, enabled or not. */
  actions: (ConfiguredAction & { enabled: boolean })[];
}

/**
 * The agent as the call ran it (its version's actions, analysis fields and criteria; undefined when
 * the agent is gone) and the call's contact: the one linked when the call was made, else the one
 * with the other party's number (undefined when there is none). One read of the agent, its version
 * and the contact (or the number's key); one more for the contact a number's key names.
 */
export async function agentAndContact(
  facts: CallFacts,
): Promise<{ agent: AgentActions | undefined; contact: ContactFacts | undefined }> {
  const { workspaceId, agentId, agentVersion } = facts;
  const byId = facts.contactId && isId('contact', facts.contactId) ? facts.contactId : undefined;
  const phone = byId ? undefined : normalisePhone(otherParty(facts));
  const keys: TableKey[] = [entityKey(AgentEntity.get({ workspaceId, agentId }).params())];
  const versionAt =
    agentVersion !== undefined && Number.isSafeInteger(agentVersion) && agentVersion >= 1
      ? keys.push(
          entityKey(AgentVersionEntity.get({ workspaceId, agentId, version: agentVersion }).params()),
        ) - 1
      : -1;
  const contactAt = byId
    ? keys.push(entityKey(ContactEntity.get({ workspaceId, contactId: byId }).params())) - 1
    : phone
      ? keys.push(entityKey(ContactPhoneEntity.get({ workspaceId, phone }).params())) - 1
      : -1;
  const items = await batchGetStoredItems(keys);
  const parsed = <T>(at: number, parse: (item: { Item: StoredItem }) => { data: unknown }) => {
    const item = at >= 0 ? items[at] : undefined;
    return item ? ((parse({ Item: item }).data as T | null) ?? undefined) : undefined;
  };
  const live = parsed<Agent>(0, (i) => AgentEntity.parse(i));
  const version = parsed<Parameters<typeof agentAsOf>[1]>(versionAt, (i) => AgentVersionEntity.parse(i));
  const agent = live ? (version ? agentAsOf(live, version) : live) : undefined;

  let contact: Contact | null | undefined;
  if (byId) {
    // Linked when the call was made; by the number when it was deleted since.
    contact =
      parsed<Contact>(contactAt, (i) => ContactEntity.parse(i)) ??
      (await findContactByPhone(workspaceId, otherParty(facts)));
  } else {
    const key = parsed<{ contactId: string }>(contactAt, (i) => ContactPhoneEntity.parse(i));
    contact = key ? await getContact(workspaceId, key.contactId) : undefined;
  }
  return {
    agent: agent && agentActions(agent),
    contact: contact
      ? { contactId: contact.contactId, name: contact.name, phone: contact.phone, email: contact.email }
      : undefined,
  };
}

function agentActions(agent: Agent): AgentActions {
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
