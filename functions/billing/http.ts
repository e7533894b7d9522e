import { domainHandler } from '../platform/http/index.js';
import { billingRoutes } from './routes.js';

/** The billing domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(billingRoutes, {
  getBilling: () => import('./handlers/get-billing.js'),
  listLedger: () => import('./handlers/list-ledger.js'),
  startSubscription: () => import('./handlers/start-subscription.js'),
  cancelSubscription: () => import('./handlers/cancel-subscription.js'),
  createPortalSession: () => import('./handlers/create-portal-session.js'),
  buyCredits: () => import('./handlers/buy-credits.js'),
  pricingModel: () => import('./handlers/pricing-model.js'),
});
