import { domainHandler } from '../platform/http/index.js';
import { numberRoutes } from './routes.js';
import { handler as listPhoneNumbers } from './handlers/list-phone-numbers.js';
import { handler as buyPhoneNumber } from './handlers/buy-phone-number.js';
import { handler as updatePhoneNumber } from './handlers/update-phone-number.js';
import { handler as releasePhoneNumber } from './handlers/release-phone-number.js';

/** The numbers domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(numberRoutes, {
  listPhoneNumbers,
  buyPhoneNumber,
  updatePhoneNumber,
  releasePhoneNumber,
});
