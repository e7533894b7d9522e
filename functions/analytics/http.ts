import { domainHandler } from '../platform/http/index.js';
import { analyticsRoutes } from './routes.js';

/** The analytics domain's one HTTP function. */
export const handler = domainHandler(analyticsRoutes, {
  callAnalytics: () => import('./handlers/call-analytics.js'),
});
