import { domainHandler } from '../platform/http/index.js';
import { billingRoutes } from './routes.js';
import { handler as getBilling } from './handlers/get-billing.js';
import { handler as listLedger } from './handlers/list-ledger.js';
import { handler as startSubscription } from './handlers/start-subscription.js';
import { handler as cancelSubscription } from './handlers/cancel-subscription.js';
import { handler as createPortalSession } from './handlers/create-portal-session.js';
import { handler as buyCredits } from './handlers/buy-credits.js';
import { handler as pricingModel } from './handlers/pricing-model.js';

/** The billing domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(billingRoutes, {
  getBilling,
  listLedger,
  startSubscription,
  cancelSubscription,
  createPortalSession,
  buyCredits,
  pricingModel,
});
