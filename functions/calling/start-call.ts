import { accessFrom, authorize, requireWorkspace, WORKSPACE_NOT_FOUND } from '../access/workspace-access.js';
import { callPiiRedaction } from './pii.js';
import type { Agent, AgentVersion } from '../agents/entities.js';
import { AGENT_NOT_FOUND } from '../agents/service.js';
import { AGENT_VERSION_NOT_FOUND, agentAsOf } from '../agents/versions.js';
import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import { actorId, type Principal } from '../platform/auth/principal.js';
import { clock } from '../platform/clock.js';
import { conflict, HttpError, notFound, paymentRequired, tooManyRequests } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { recordMetrics } from '../platform/metrics.js';
import { sendMessage } from '../platform/queue.js';
import type { DispatchMessage } from '../platform/queue-messages.js';
import { idempotencyScope } from '../platform/http/idempotency.js';
import { getStoredItems, writeStoredItems } from '../platform/table.js';
import { OPEN_CALL_SHARDS, type Call } from './entities.js';
import { asEntityItem, startCallKeys as keys, startCallTransaction } from './start-call-items.js';
import {
  claimIdempotencyKey,
  IDEMPOTENCY_IN_FLIGHT,
  releaseIdempotencyKey,
  requestHash,
} from '../platform/idempotency.js';
import type { CallCreateResponse, StartCallBody } from './schemas.js';
import { dialSettingsOf } from './dial.js';
import { renderTemplate } from '../agents/template.js';
import { deadlineFor } from './status.js';
import { callShardOf } from './call-shards.js';

/**
 * Start-call, in docs/api.md's order of checks: workspace (404) → agent (404) → number (404)
 * → credits (402) → concurrency (429) → 201. The happy path is at most four DynamoDB round trips:
 *   API key: [key read, by the kernel] [idempotency claim] batched read of workspace + agent +
 *            from_phone's number + billing account + to_phone's contact key; one transaction.
 *   JWT:     [idempotency claim] batched read of workspace + workspace member + agent + number +
 *            to_phone's contact key; batched read of organisation member + billing account; one
 *            transaction.
 * The contact key links the call to the workspace's contact with that number (`contactId`), at no
 * round trip of its own.
 * The transaction writes the call, its first status event and its sweeper marker, takes a concurrency
 * slot (`activeCalls < concurrentCallLimit`) and completes the idempotency record. The call is then
 * handed to the dispatcher through the `calls` queue — never dialled inside the request; should that
 * send fail, the sweeper dispatches the call again. The reads and the transaction are plain items
 * (start-call-items.ts), without ElectroDB's work on each request: this is the hot path.
 */
export const NUMBER_NOT_IN_WORKSPACE = 'Number not found in workspace';
export const NUMBER_WITHOUT_AGENT = 'Number not associated with an agent';
export const TOO_MANY_CONCURRENT_CALLS = 'Too many concurrent calls';
export const CONCURRENCY_RETRY_AFTER_SECONDS = 30;

export interface StartCallInput {
  principal: Principal;
  workspaceId: string;
  agentId: string;
  body: StartCallBody;
  idempotencyKey?: string;
  /** Set by a campaign's dialer: the call carries it (call log `campaign_id`). */
  campaignId?: string;
}

export const shardOf = (callId: string): number =>
  [...callId].reduce((sum, c) => sum + c.charCodeAt(0), 0) % OPEN_CALL_SHARDS;

export async function startCall(input: StartCallInput): Promise<CallCreateResponse> {
  const { principal, workspaceId, agentId, body, idempotencyKey, campaignId } = input;
  // The caller's key within the workspace: the kernel's rule for every write route.
  const scope = idempotencyScope({ workspace_id: workspaceId }, principal);
  let token: string | undefined;
  if (idempotencyKey) {
    const claim = await claimIdempotencyKey(scope, idempotencyKey, requestHash({ agent_id: agentId, body }));
    if (claim.kind === 'replay') {
      // The first request was authorised; this caller must be allowed the same now.
      if (principal.kind === 'user') await requireWorkspace(principal, workspaceId, 'calls:write');
      return claim.response as CallCreateResponse;
    }
    token = claim.token;
  }
  try {
    const plan = { ...(await readAndCheck(principal, workspaceId, agentId, body)), campaignId };
    const response = await createCall(
      plan,
      idempotencyKey && token ? { scope, key: idempotencyKey, token } : undefined,
    );
    await dispatch({ type: 'call.dispatch', call_id: response.id, workspace_id: workspaceId });
    return response;
  } catch (error) {
    // A definite refusal gives the key back; after an unknown failure its claim lapses on its own.
    if (idempotencyKey && token && error instanceof HttpError) {
      await releaseIdempotencyKey(scope, idempotencyKey, token).catch((e: unknown) =>
        logger.warn('could not release idempotency key', { error: String(e) }),
      );
    }
    throw error;
  }
}

/** Sends the dispatch message; a failure is logged only (the sweeper dispatches calls left in `created`). */
export async function dispatch(message: DispatchMessage): Promise<void> {
  try {
    await sendMessage('calls', message);
  } catch (error) {
    logger.error('dispatch message not sent; the sweeper will dispatch the call', {
      callId: message.call_id,
      error: String(error),
    });
  }
}

interface CallPlan {
  principal: Principal;
  workspaceId: string;
  organisationId: string;
  agent: Agent;
  fromPhone: string;
  body: StartCallBody;
  campaignId?: string;
  /** The workspace's contact with the number called, read with the rest (no round trip of its own). */
  contactId?: string;
  /** The workspace's time zone, read with the rest: the day the call is counted in (call-stats.ts). */
  timezone?: string;
}

async function readAndCheck(
  principal: Principal,
  workspaceId: string,
  agentId: string,
  body: StartCallBody,
): Promise<CallPlan> {
  if (!isId('workspace', workspaceId)) throw notFound(WORKSPACE_NOT_FOUND);
  const agentIdOk = isId('agent', agentId);
  const fromPhone = body.from_phone ?? undefined;
  // A pinned version is read with the rest (no round trip of its own).
  const pinned = agentIdOk && body.agent_version ? body.agent_version : undefined;

  let records: {
    workspace?: Parameters<typeof accessFrom>[1]['workspace'];
    orgMember?: Parameters<typeof accessFrom>[1]['orgMember'];
    workspaceRole?: Parameters<typeof accessFrom>[1]['workspaceRole'];
    agent?: Agent | null;
    claim?: { workspaceId: string; agentId?: string } | null;
    billing?: { balanceUnits: number; agentsSuspended?: boolean } | null;
    contact?: { contactId: string } | null;
    version?: AgentVersion | null;
  };

  if (principal.kind === 'api_key') {
    // The key carries its organisation: one batched read covers everything.
    const read = await getStoredItems([
      keys.workspace(workspaceId),
      keys.billingAccount(principal.organisationId),
      ...(agentIdOk ? [keys.agent(workspaceId, agentId)] : []),
      ...(fromPhone ? [keys.phoneClaim(fromPhone)] : []),
      keys.contactPhone(workspaceId, body.to_phone),
      ...(pinned ? [keys.agentVersion(workspaceId, agentId, pinned)] : []),
    ]);
    let i = 2;
    records = {
      workspace: asEntityItem<NonNullable<CallPlanWorkspace>>(read[0]),
      billing: asEntityItem<NonNullable<CallPlanBilling>>(read[1]),
      agent: agentIdOk ? asEntityItem<Agent>(read[i++]) : null,
      claim: fromPhone ? asEntityItem<NonNullable<CallPlanClaim>>(read[i++]) : null,
      contact: asEntityItem<{ contactId: string }>(read[i++]),
      version: pinned ? asEntityItem<AgentVersion>(read[i++]) : null,
    };
  } else {
    const read = await getStoredItems([
      keys.workspace(workspaceId),
      keys.workspaceMember(workspaceId, principal.userId),
      ...(agentIdOk ? [keys.agent(workspaceId, agentId)] : []),
      ...(fromPhone ? [keys.phoneClaim(fromPhone)] : []),
      keys.contactPhone(workspaceId, body.to_phone),
      ...(pinned ? [keys.agentVersion(workspaceId, agentId, pinned)] : []),
    ]);
    const workspace = asEntityItem<NonNullable<CallPlanWorkspace>>(read[0]);
    if (!workspace || workspace.deletedAt) throw notFound(WORKSPACE_NOT_FOUND);
    let i = 2;
    const agent = agentIdOk ? asEntityItem<Agent>(read[i++]) : null;
    const claim = fromPhone ? asEntityItem<NonNullable<CallPlanClaim>>(read[i++]) : null;
    const contact = asEntityItem<{ contactId: string }>(read[i++]);
    const version = pinned ? asEntityItem<AgentVersion>(read[i++]) : null;
    const [orgMember, billing] = await getStoredItems([
      keys.orgMember(workspace.organisationId, principal.userId),
      keys.billingAccount(workspace.organisationId),
    ]);
    records = {
      workspace,
      workspaceRole: asEntityItem<{ role?: CallPlanRole }>(read[1])?.role,
      orgMember: asEntityItem<NonNullable<CallPlanOrgMember>>(orgMember),
      billing: asEntityItem<NonNullable<CallPlanBilling>>(billing),
      agent,
      claim,
      contact,
      version,
    };
  }

  // 404 Workspace not found (also: not a member) → 403 for a viewer.
  const access = accessFrom(principal, {
    workspace: records.workspace,
    orgMember: records.orgMember,
    workspaceRole: records.workspaceRole,
  });
  authorize(access, 'calls:write');
  // 404 Agent not found.
  const live = records.agent;
  if (!live || live.workspaceId !== workspaceId) throw notFound(AGENT_NOT_FOUND);
  // 404 Agent version not found: the pinned version is the agent's own (its key names the agent).
  if (body.agent_version && !records.version) throw notFound(AGENT_VERSION_NOT_FOUND);
  // The agent the call runs: the pinned version, else the version the agent is at now.
  const agent = records.version ? agentAsOf(live, records.version) : live;
  // 404 for the number: the given one must be this workspace's and this agent's; else the agent's own.
  let from: string;
  if (fromPhone) {
    const claim = records.claim;
    if (!claim || claim.workspaceId !== workspaceId) throw notFound(NUMBER_NOT_IN_WORKSPACE);
    if (claim.agentId !== agent.agentId) throw notFound(NUMBER_WITHOUT_AGENT);
    from = fromPhone;
  } else {
    if (!agent.phoneNumber) throw notFound(NUMBER_NOT_IN_WORKSPACE);
    from = agent.phoneNumber;
  }
  // 402 when the organisation has no credits left (or its agents are suspended by billing).
  const billing = records.billing;
  if (!billing || billing.balanceUnits <= 0 || billing.agentsSuspended)
    throw paymentRequired(INSUFFICIENT_CREDITS);
  return {
    principal,
    workspaceId,
    organisationId: access.organisationId,
    agent,
    fromPhone: from,
    body,
    contactId: records.contact?.contactId,
    timezone: (records.workspace as { timezone?: string } | undefined)?.timezone,
  };
}

type CallPlanWorkspace = Parameters<typeof accessFrom>[1]['workspace'];
type CallPlanOrgMember = Parameters<typeof accessFrom>[1]['orgMember'];
type CallPlanRole = NonNullable<Parameters<typeof accessFrom>[1]['workspaceRole']>;
type CallPlanBilling = { balanceUnits: number; agentsSuspended?: boolean } | null;
type CallPlanClaim = { workspaceId: string; agentId?: string } | null;

async function createCall(
  plan: CallPlan,
  idempotency: { scope: string; key: string; token: string } | undefined,
): Promise<CallCreateResponse> {
  const { workspaceId, agent, body } = plan;
  const callId = newId('call');
  const createdAt = clock.now().toISOString();
  const record = body.record ?? true;
  const createdBy = actorId(plan.principal);
  const response: CallCreateResponse = {
    id: callId,
    agent_id: agent.agentId,
    workspace_id: workspaceId,
    to_phone: body.to_phone,
    from_phone: plan.fromPhone,
    record,
    created_by: createdBy,
    status: 'created',
    created_at: createdAt,
    agent_version: agent.version ?? null,
  };
  const call: Call = {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId: plan.organisationId,
    agentId: agent.agentId,
    ...(plan.campaignId ? { campaignId: plan.campaignId } : {}),
    ...(plan.contactId ? { contactId: plan.contactId } : {}),
    direction: 'outbound',
    toPhone: body.to_phone,
    fromPhone: plan.fromPhone,
    record,
    parameters: body.parameters ?? {},
    status: 'created',
    statusRank: 0,
    createdBy,
    createdAt,
    agentName: agent.name,
    ...(agent.version !== undefined ? { agentVersion: agent.version } : {}),
    ...callPiiRedaction(agent),
    greeting: agent.greeting,
    prompt: agent.prompt,
    maxDurationSeconds: agent.settings.maxDurationSeconds,
    deadlineAt: deadlineFor(createdAt, agent.settings.maxDurationSeconds),
    openShard: shardOf(callId),
    // What the dispatcher needs to dial it, so that it reads nothing more (dial.ts), and what
    // answering-machine detection will do on a machine (amd.ts, relay-ended.ts).
    dial: dialSettingsOf(agent),
    ...voicemailOf(agent, body.parameters ?? {}),
    statsTimezone: plan.timezone ?? 'UTC',
  };
  const result = await writeRetryingConflicts(
    startCallTransaction({
      call,
      idempotency: idempotency && { ...idempotency, response: JSON.stringify(response) },
    }),
  );
  if (result.canceled) {
    // In the transaction's order: call, status event, marker, concurrency slot, agent's number, key.
    const { codes } = result;
    if (codes[3] === 'ConditionalCheckFailed') {
      throw tooManyRequests(TOO_MANY_CONCURRENT_CALLS, CONCURRENCY_RETRY_AFTER_SECONDS);
    }
    if (codes[4] === 'ConditionalCheckFailed') throw notFound(NUMBER_WITHOUT_AGENT);
    if (codes[5] === 'ConditionalCheckFailed') throw conflict(IDEMPOTENCY_IN_FLIGHT);
    throw new Error(`start-call transaction cancelled: ${JSON.stringify(codes)}`);
  }
  return response;
}

const MAX_CONFLICT_RETRIES = 12;

/**
 * The start's transaction, again while DynamoDB cancels it only for another transaction on one of its
 * items (every start of a workspace takes its slot on the one workspace item: a burst of starts
 * meets each other there, docs/scale.md). A condition failing (no slot, …) is the answer at once.
 * After the last retry the conflict is the outcome (a 500: nothing was written).
 */
async function writeRetryingConflicts(items: Parameters<typeof writeStoredItems>[0]) {
  for (let attempt = 0; ; attempt += 1) {
    const result = await writeStoredItems(items);
    if (!result.canceled || attempt >= MAX_CONFLICT_RETRIES) return result;
    if (!result.codes.includes('TransactionConflict') || result.codes.includes('ConditionalCheckFailed'))
      return result;
    recordMetrics({ CallWriteConflicts: 1 });
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 10 * 2 ** Math.min(attempt, 5)));
  }
}

/**
 * What the call does when answering-machine detection finds a machine (the agent's `voicemail`, with
 * detection on): hang up, or leave the message with the call's parameters filled.
 */
function voicemailOf(agent: Agent, parameters: Record<string, string>): Partial<Call> {
  const voicemail = agent.voicemail?.detection ? agent.voicemail : undefined;
  if (!voicemail) return {};
  return {
    voicemailAction: voicemail.action,
    ...(voicemail.action === 'leave_message' && voicemail.message
      ? { voicemailMessage: renderTemplate(voicemail.message, parameters) }
      : {}),
  };
}
