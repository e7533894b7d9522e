import { domainHandler } from '../platform/http/index.js';
import { analyticsRoutes } from './routes.js';
import { handler as callAnalytics } from './handlers/call-analytics.js';

/** The analytics domain's one HTTP function. */
export const handler = domainHandler(analyticsRoutes, { callAnalytics });
