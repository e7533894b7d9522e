import { domainHandler } from '../platform/http/index.js';
import { numberRoutes } from './routes.js';

/** The numbers domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(numberRoutes, {
  listPhoneNumbers: () => import('./handlers/list-phone-numbers.js'),
  buyPhoneNumber: () => import('./handlers/buy-phone-number.js'),
  updatePhoneNumber: () => import('./handlers/update-phone-number.js'),
  releasePhoneNumber: () => import('./handlers/release-phone-number.js'),
});
