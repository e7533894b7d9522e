import type { z } from 'zod';
import { AgentEntity } from '../agents/entities.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { AGENT_NOT_FOUND } from '../agents/service.js';
import { getBillingAccount } from '../billing/ledger.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound, paymentRequired } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { toE164 } from '../platform/phone.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { telephony, TelephonyError, VOICE_WEBHOOK_PATH } from '../providers/telephony/index.js';
import { numberService, PhoneClaimEntity, PhoneNumberEntity, type PhoneNumber } from './entities.js';
import type { PhoneNumberResponse } from './schemas.js';

/** Phone numbers: bought and released through the telephony port, connected to at most one agent. */
export const NUMBER_NOT_FOUND = 'Phone number not found';
export const SUBSCRIPTION_REQUIRED = 'Active subscription required';
export const NUMBER_IN_USE = 'Phone number is already in use';
export const NUMBER_UNAVAILABLE = 'No phone number is available for that request';
export const AGENT_HAS_NUMBER = 'Agent already has a phone number connected';

export function toNumberResponse(number: PhoneNumber): z.infer<typeof PhoneNumberResponse> {
  return {
    id: number.numberId,
    workspace_id: number.workspaceId,
    phone_number: number.phoneNumber,
    country: number.country,
    agent_id: number.agentId ?? null,
    provider: number.provider,
    created_by: number.createdBy,
    created_at: number.createdAt,
    updated_at: number.updatedAt ?? null,
  };
}

/** Buying needs an active subscription to a paid plan. */
export async function requireActiveSubscription(organisationId: string): Promise<void> {
  const account = await getBillingAccount(organisationId);
  if (!account || account.plan === 'free' || account.subscriptionStatus !== 'active')
    throw paymentRequired(SUBSCRIPTION_REQUIRED);
}

/**
 * Buys a number for a workspace (the CLI seed's entry point too; the subscription check is not
 * optional): through the telephony port, then the number and its service-wide claim in one
 * transaction. Should the claim be taken (a number the service already holds), the purchase is
 * released again.
 */
export async function provisionNumber(input: {
  workspaceId: string;
  organisationId: string;
  country?: 'AU';
  areaCode?: string;
  phoneNumber?: string;
  createdBy?: string;
}): Promise<PhoneNumber> {
  await requireActiveSubscription(input.organisationId);
  const wanted = input.phoneNumber === undefined ? undefined : toE164(input.phoneNumber);
  if (input.phoneNumber !== undefined && !wanted) throw conflict(NUMBER_UNAVAILABLE);
  if (wanted) {
    const { data: claim } = await PhoneClaimEntity.get({ phoneNumber: wanted }).go({ consistent: true });
    if (claim) throw conflict(NUMBER_IN_USE);
  }
  const port = telephony();
  const voiceUrl = providerWebhookUrl(VOICE_WEBHOOK_PATH);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    let bought;
    try {
      bought = await port.provisionNumber({
        country: input.country ?? 'AU',
        areaCode: input.areaCode?.replace(/^0/, ''),
        phoneNumber: wanted,
        voiceUrl: `${voiceUrl}?event=incoming`,
        statusCallbackUrl: voiceUrl,
      });
    } catch (error) {
      if (error instanceof TelephonyError && error.definitive) throw conflict(NUMBER_UNAVAILABLE);
      throw error;
    }
    const phoneNumber = toE164(bought.phoneNumber) ?? bought.phoneNumber;
    const numberId = newId('phoneNumber');
    const createdAt = clock.now().toISOString();
    const record = {
      workspaceId: input.workspaceId,
      numberId,
      organisationId: input.organisationId,
      phoneNumber,
      country: input.country ?? 'AU',
      provider: port.name,
      providerNumberId: bought.providerNumberId,
      createdBy: input.createdBy ?? 'system',
      createdAt,
    };
    const result = await numberService.transaction
      .write(({ phoneNumber: numbers, phoneClaim: claims }) => [
        claims
          .create({
            phoneNumber,
            numberId,
            workspaceId: input.workspaceId,
            organisationId: input.organisationId,
          })
          .commit(),
        numbers.create(record).commit(),
      ])
      .go();
    if (!result.canceled) return record as PhoneNumber;
    await port
      .releaseNumber(bought.providerNumberId)
      .catch((error: unknown) =>
        logger.error('could not release a number bought twice', { phoneNumber, error: String(error) }),
      );
    if (wanted) throw conflict(NUMBER_IN_USE);
    logger.warn('provider offered a number the service already holds; buying another', { phoneNumber });
  }
  throw conflict(NUMBER_UNAVAILABLE);
}

export async function findNumber(workspaceId: string, numberId: string): Promise<PhoneNumber | undefined> {
  if (!isId('phoneNumber', numberId)) return undefined;
  const { data } = await PhoneNumberEntity.get({ workspaceId, numberId }).go({ consistent: true });
  return data ?? undefined;
}

export async function listNumbers(workspaceId: string, query: ListQuery): Promise<Page<PhoneNumber>> {
  const page = await queryPage(query.cursor, (cursor) =>
    PhoneNumberEntity.query.byWorkspace({ workspaceId }).go({ count: query.limit, cursor }),
  );
  return { items: page.items as PhoneNumber[], nextCursor: page.nextCursor };
}

/**
 * Connects a number to an agent of the same workspace (moving it from the agent it had), or
 * disconnects it (`agentId` null). The number, its claim and both agents change in one transaction,
 * each guarded by what was read, so concurrent changes never leave a number on two agents.
 */
export async function connectNumber(
  workspaceId: string,
  numberId: string,
  agentId: string | null,
): Promise<PhoneNumber> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const number = await findNumber(workspaceId, numberId);
    if (!number) throw notFound(NUMBER_NOT_FOUND);
    const previous = number.agentId;
    if ((previous ?? null) === agentId) return number;
    if (agentId !== null) {
      const agent = isId('agent', agentId)
        ? (await AgentEntity.get({ workspaceId, agentId }).go({ consistent: true })).data
        : null;
      if (!agent) throw notFound(AGENT_NOT_FOUND);
      if (agent.phoneNumberId && agent.phoneNumberId !== numberId) throw conflict(AGENT_HAS_NUMBER);
    }
    const updatedAt = clock.now().toISOString();
    const result = await numberService.transaction
      .write(({ agent: agents, phoneNumber: numbers, phoneClaim: claims }) => {
        const guard = <T>(attr: T, op: { eq: (a: T, v: string) => string; notExists: (a: T) => string }) =>
          previous ? op.eq(attr, previous) : op.notExists(attr);
        const items = [];
        if (agentId === null) {
          items.push(
            numbers
              .patch({ workspaceId, numberId })
              .remove(['agentId'])
              .set({ updatedAt })
              .where((attr, op) => guard(attr.agentId, op))
              .commit(),
            claims
              .patch({ phoneNumber: number.phoneNumber })
              .remove(['agentId'])
              .where((attr, op) => guard(attr.agentId, op))
              .commit(),
          );
        } else {
          items.push(
            numbers
              .patch({ workspaceId, numberId })
              .set({ agentId, updatedAt })
              .where((attr, op) => guard(attr.agentId, op))
              .commit(),
            claims
              .patch({ phoneNumber: number.phoneNumber })
              .set({ agentId })
              .where((attr, op) => guard(attr.agentId, op))
              .commit(),
            agents
              .patch({ workspaceId, agentId })
              .set({ phoneNumberId: numberId, phoneNumber: number.phoneNumber, updatedAt })
              .where((attr, op) => op.notExists(attr.phoneNumberId))
              .commit(),
          );
        }
        if (previous) {
          items.push(
            agents
              .patch({ workspaceId, agentId: previous })
              .remove(['phoneNumberId', 'phoneNumber'])
              .set({ updatedAt })
              .where((attr, op) => op.eq(attr.phoneNumberId, numberId))
              .commit(),
          );
        }
        return items;
      })
      .go();
    if (!result.canceled) return { ...number, agentId: agentId ?? undefined, updatedAt };
    // Something changed between the read and the write: read again and decide again.
  }
  throw conflict('Phone number is being changed by another request; try again');
}

/** Releases a number at the provider, then forgets it (and disconnects its agent) in one transaction. */
export async function releaseNumber(workspaceId: string, numberId: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const number = await findNumber(workspaceId, numberId);
    if (!number) throw notFound(NUMBER_NOT_FOUND);
    if (attempt === 0) await telephony().releaseNumber(number.providerNumberId);
    const agentId = number.agentId;
    const result = await numberService.transaction
      .write(({ agent: agents, phoneNumber: numbers, phoneClaim: claims }) => [
        numbers
          .delete({ workspaceId, numberId })
          .where((attr, op) => (agentId ? op.eq(attr.agentId, agentId) : op.notExists(attr.agentId)))
          .commit(),
        claims
          .delete({ phoneNumber: number.phoneNumber })
          .where((attr, op) => op.eq(attr.numberId, numberId))
          .commit(),
        ...(agentId
          ? [
              agents
                .patch({ workspaceId, agentId })
                .remove(['phoneNumberId', 'phoneNumber'])
                .set({ updatedAt: clock.now().toISOString() })
                .where((attr, op) => op.eq(attr.phoneNumberId, numberId))
                .commit(),
            ]
          : []),
      ])
      .go();
    if (!result.canceled) return;
  }
  throw conflict('Phone number is being changed by another request; try again');
}
