import { config } from '../platform/config.js';
import { logger } from '../platform/logger.js';
import { paymentsProvider } from '../providers/payments/index.js';
import { centsToAud, creditsToUnits, CURRENCY, EXTRA_CREDIT_PRICE_CENTS } from './credits.js';
import { recordMovement, type MovementResult } from './ledger.js';
import { ensureCustomer } from './subscriptions.js';

export interface CreditPurchase {
  purchaseId: string;
  quantity: number;
  amountCents: number;
  currency: string;
  checkoutUrl: string;
}

/**
 * Starts a purchase of extra credits (0.01 AUD each) through the payment port. No credit moves here:
 * they are granted when the provider confirms the payment (`grantPurchasedCredits`, from the webhook).
 */
export async function buyCredits(
  organisationId: string,
  quantity: number,
  options: { returnUrl?: string } = {},
): Promise<CreditPurchase> {
  const { customerId } = await ensureCustomer(organisationId);
  const checkout = await paymentsProvider().createCreditsCheckout({
    customerId,
    organisationId,
    credits: quantity,
    unitAmountCents: EXTRA_CREDIT_PRICE_CENTS,
    currency: CURRENCY,
    returnUrl: options.returnUrl ?? config().PUBLIC_BASE_URL,
  });
  return {
    purchaseId: checkout.checkoutId,
    quantity,
    amountCents: quantity * EXTRA_CREDIT_PRICE_CENTS,
    currency: CURRENCY,
    checkoutUrl: checkout.url,
  };
}

/**
 * Grants the credits of a paid purchase, once per payment. The amount paid must be the price of
 * the credits: anything else is logged and grants nothing.
 */
export async function grantPurchasedCredits(input: {
  organisationId: string;
  paymentId: string;
  credits: number;
  amountCents: number;
  currency: string;
}): Promise<MovementResult | undefined> {
  const expected = input.credits * EXTRA_CREDIT_PRICE_CENTS;
  if (input.currency.toLowerCase() !== CURRENCY || input.amountCents !== expected) {
    logger.error('credit purchase amount does not match its credits: nothing granted', {
      ...input,
      expectedCents: expected,
    });
    return undefined;
  }
  return recordMovement({
    organisationId: input.organisationId,
    kind: 'purchase',
    amountUnits: creditsToUnits(input.credits),
    reason: `Purchase of ${input.credits} credits (${centsToAud(input.amountCents).toFixed(2)} AUD)`,
    sourceKey: `purchase:${input.paymentId}`,
  });
}
