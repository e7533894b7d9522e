import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { pricingModel } from '../views.js';

/** `GET /api/v1/payment/pricing-model` (public): plans, prices and the metering rules the meter uses. */
export const handler = implement(billingRoutes.pricingModel, async () => ({
  status: 200,
  body: pricingModel(),
}));
