import { isConditionFailure } from '../platform/table.js';
import { clock, nowEpochSeconds } from '../platform/clock.js';
import { conflict, unauthorized } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { paymentsProvider, WebhookSignatureError, type BillingEvent } from '../providers/payments/index.js';
import { BILLING_EVENT_RETENTION_SECONDS, BillingEventEntity } from './entities.js';
import { getBillingAccount } from './ledger.js';
import { subscriptionPlan } from './plans.js';
import { grantPurchasedCredits } from './purchases.js';
import type { StandingListener } from './standing.js';
import { applyInvoiceOutcome, applySubscriptionChange, organisationOfCustomer } from './subscriptions.js';

/** A claim older than this is taken over (the handler that took it died). */
const CLAIM_SECONDS = 60;

export interface WebhookResult {
  status: number;
  body: { received: true; duplicate?: true; outcome?: string };
}

/**
 * `POST /webhooks/billing`: verifies the provider's signature before anything else (a forged, altered
 * or stale event is 401 and changes nothing), then handles each event id once: the id is claimed
 * with a conditional write, the event applied (every effect is idempotent on its own too), and the
 * claim marked done. A duplicate of a handled event changes nothing; one still being handled is 409,
 * which the provider retries. `listener` hears when an organisation is back in good standing.
 */
export async function handleBillingWebhook(
  payload: string,
  signature: string | undefined,
  listener: StandingListener,
): Promise<WebhookResult> {
  let event: BillingEvent;
  try {
    event = await paymentsProvider().parseWebhook(payload, signature);
  } catch (error) {
    if (error instanceof WebhookSignatureError) {
      logger.warn('billing webhook refused', { reason: error.message, cause: String(error.cause ?? '') });
      throw unauthorized();
    }
    throw error;
  }
  const claim = await claimEvent(event);
  if (claim === 'done') return { status: 200, body: { received: true, duplicate: true } };
  if (claim === 'busy') throw conflict('Event is being processed');
  let outcome: string;
  let organisationId: string | undefined;
  try {
    ({ outcome, organisationId } = await applyEvent(event, listener));
  } catch (error) {
    await BillingEventEntity.delete({ eventId: event.id }).go({ response: 'none' });
    throw error;
  }
  await BillingEventEntity.patch({ eventId: event.id })
    .set({
      state: 'done',
      processedAt: clock.now().toISOString(),
      ...(organisationId ? { organisationId } : {}),
    })
    .go({ response: 'none' });
  logger.info('billing event handled', { eventId: event.id, type: event.type, organisationId, outcome });
  return { status: 200, body: { received: true, outcome } };
}

async function claimEvent(event: BillingEvent): Promise<'claimed' | 'done' | 'busy'> {
  const now = nowEpochSeconds();
  try {
    await BillingEventEntity.create({
      eventId: event.id,
      type: event.type,
      state: 'processing',
      claimedAt: now,
      expiresAt: now + BILLING_EVENT_RETENTION_SECONDS,
    }).go({ response: 'none' });
    return 'claimed';
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  const { data: existing } = await BillingEventEntity.get({ eventId: event.id }).go({ consistent: true });
  if (!existing) return claimEvent(event);
  if (existing.state === 'done') return 'done';
  if (existing.claimedAt > now - CLAIM_SECONDS) return 'busy';
  try {
    await BillingEventEntity.patch({ eventId: event.id })
      .set({ claimedAt: now })
      .where(
        (attr, op) => `${op.eq(attr.state, 'processing')} AND ${op.eq(attr.claimedAt, existing.claimedAt)}`,
      )
      .go({ response: 'none' });
    return 'claimed';
  } catch (error) {
    if (isConditionFailure(error)) return 'busy';
    throw error;
  }
}

/** The organisation an event is about: by the provider customer we created for it. */
async function organisationOf(
  customerId: string | undefined,
  named: string | undefined,
): Promise<string | undefined> {
  if (customerId) {
    const organisationId = await organisationOfCustomer(customerId);
    if (organisationId) return organisationId;
  }
  if (!named) return undefined;
  const account = await getBillingAccount(named);
  return account && (!account.providerCustomerId || account.providerCustomerId === customerId)
    ? named
    : undefined;
}

async function applyEvent(
  event: BillingEvent,
  listener: StandingListener,
): Promise<{ outcome: string; organisationId?: string }> {
  switch (event.kind) {
    case 'subscription': {
      const organisationId = await organisationOf(event.customerId, event.organisationId);
      if (!organisationId) return { outcome: 'unknown_customer' };
      const outcome = await applySubscriptionChange(
        {
          organisationId,
          customerId: event.customerId,
          subscriptionId: event.subscriptionId,
          status: event.status,
          plan: subscriptionPlan(event),
          eventCreated: event.created,
        },
        listener,
      );
      return { outcome, organisationId };
    }
    case 'invoice': {
      const organisationId = await organisationOf(event.customerId, undefined);
      if (!organisationId) return { outcome: 'unknown_customer' };
      const outcome = await applyInvoiceOutcome(
        {
          organisationId,
          customerId: event.customerId,
          subscriptionId: event.subscriptionId,
          outcome: event.outcome,
          eventCreated: event.created,
        },
        listener,
      );
      return { outcome, organisationId };
    }
    case 'credits_paid': {
      const organisationId = await organisationOf(event.customerId, event.organisationId);
      if (!organisationId) return { outcome: 'unknown_customer' };
      const result = await grantPurchasedCredits({
        organisationId,
        paymentId: event.paymentId,
        credits: event.credits,
        amountCents: event.amountCents,
        currency: event.currency,
      });
      return {
        outcome: !result ? 'amount_mismatch' : result.duplicate ? 'already_granted' : 'granted',
        organisationId,
      };
    }
    default:
      return { outcome: 'ignored' };
  }
}
