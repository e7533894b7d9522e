import { defineRoute } from '../platform/http/route.js';
import * as analytics from './schemas.js';

export const analyticsRoutes = {
  callAnalytics: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/analytics/calls',
    summary: 'Get call analytics',
    description:
      'Calls over a range of days (from, to: YYYY-MM-DD in the workspace’s time zone, at most 366 days; default the ' +
      'last 30), grouped by day, agent or status, optionally for one agent; from counters kept on write (viewer)',
    auth: 'user_or_api_key',
    scope: 'calls:read',
    query: analytics.CallAnalyticsQuery,
    response: analytics.CallAnalyticsResponse,
    access: { table: 'readwrite' },
  }),
};
