import { createHash, randomBytes } from 'node:crypto';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { isConditionFailure } from '../platform/table.js';
import { TestChatTicketEntity, type TestChatTicket } from './entities.js';

/**
 * The test chat's one-time ticket. A browser cannot set a WebSocket's headers, and a token in a URL
 * ends up in logs and histories; so a member buys a ticket with their token (POST
 * …/agents/{agent_id}/test-chat) and the dashboard opens the relay with `?channel=web&ticket=…`. The
 * ticket is 32 random bytes; only its SHA-256 is stored, with what the chat was bought for (user,
 * workspace, agent, parameters, whether post-call actions run) and an expiry 60 s on. The relay's
 * `$connect` spends it with one conditional delete (it exists and has not expired), so it opens at
 * most one chat, and a used, expired or unknown ticket opens none. A browser voice call (calling/
 * web-call.ts) is opened with the same ticket, naming the call it has created already (`callId`).
 */

/** How long a ticket may wait to be spent. */
export const TEST_CHAT_TICKET_SECONDS = 60;

export interface TestChatGrant {
  workspaceId: string;
  organisationId: string;
  agentId: string;
  userId: string;
  parameters: Record<string, string>;
  runPostCallActions: boolean;
  /** A browser voice call's: the call (created already, still `created`) the ticket connects. */
  callId?: string;
  /** A test chat's: the agent's version it runs (absent: the agent as it is when the chat opens). */
  agentVersion?: number;
}

const hashOf = (ticket: string): string => createHash('sha256').update(ticket, 'utf8').digest('hex');

/** Stores a new ticket for this grant; returns the ticket (shown once) and when it expires. */
export async function issueTestChatTicket(
  grant: TestChatGrant,
): Promise<{ ticket: string; expiresAt: Date }> {
  const now = clock.now();
  const expiresAtSeconds = Math.floor(now.getTime() / 1000) + TEST_CHAT_TICKET_SECONDS;
  const ticket = randomBytes(32).toString('base64url');
  await TestChatTicketEntity.create({
    ticketHash: hashOf(ticket),
    workspaceId: grant.workspaceId,
    organisationId: grant.organisationId,
    agentId: grant.agentId,
    userId: grant.userId,
    parameters: JSON.stringify(grant.parameters),
    runPostCallActions: grant.runPostCallActions,
    ...(grant.callId ? { callId: grant.callId } : {}),
    ...(grant.agentVersion !== undefined ? { agentVersion: grant.agentVersion } : {}),
    createdAt: now.toISOString(),
    expiresAt: expiresAtSeconds,
  }).go({ response: 'none' });
  logger.info('test chat ticket issued', { workspaceId: grant.workspaceId, agentId: grant.agentId });
  return { ticket, expiresAt: new Date(expiresAtSeconds * 1000) };
}

/**
 * Spends a ticket: deletes it on condition that it exists and has not expired, and returns what it
 * was bought for; undefined for a ticket that is unknown, already spent or expired (nothing changes).
 */
export async function spendTestChatTicket(ticket: string): Promise<TestChatGrant | undefined> {
  if (!ticket || ticket.length > 200) return undefined;
  const nowSeconds = Math.floor(clock.now().getTime() / 1000);
  let spent: TestChatTicket | null;
  try {
    const { data } = await TestChatTicketEntity.remove({ ticketHash: hashOf(ticket) })
      .where(({ expiresAt }, { gt }) => gt(expiresAt, nowSeconds))
      .go({ response: 'all_old' });
    spent = data as TestChatTicket | null;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
  if (!spent) return undefined;
  return {
    workspaceId: spent.workspaceId,
    organisationId: spent.organisationId,
    agentId: spent.agentId,
    userId: spent.userId,
    parameters: parametersOf(spent.parameters),
    runPostCallActions: spent.runPostCallActions,
    ...(spent.callId ? { callId: spent.callId } : {}),
    ...(spent.agentVersion !== undefined ? { agentVersion: spent.agentVersion } : {}),
  };
}

function parametersOf(json: string): Record<string, string> {
  const value: unknown = JSON.parse(json);
  const out: Record<string, string> = {};
  if (value && typeof value === 'object')
    for (const [name, text] of Object.entries(value as Record<string, unknown>))
      if (typeof text === 'string') out[name] = text;
  return out;
}
