import { domainHandler } from '../platform/http/index.js';
import { callRoutes } from './routes.js';
import { handler as listCalls } from './handlers/list-calls.js';
import { handler as getCall } from './handlers/get-call.js';
import { handler as hangupCall } from './handlers/hangup-call.js';
import { handler as getCallRecording } from './handlers/get-call-recording.js';

/** The calling domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(callRoutes, { listCalls, getCall, hangupCall, getCallRecording });
