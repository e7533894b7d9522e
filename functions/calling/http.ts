import { domainHandler } from '../platform/http/index.js';
import { callRoutes } from './routes.js';

/** The calling domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(callRoutes, {
  listCalls: () => import('./handlers/list-calls.js'),
  getCall: () => import('./handlers/get-call.js'),
  hangupCall: () => import('./handlers/hangup-call.js'),
  getCallRecording: () => import('./handlers/get-call-recording.js'),
  createWebCall: () => import('./handlers/create-web-call.js'),
});
