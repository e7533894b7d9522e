import { defineRoute } from '../platform/http/route.js';
import * as calling from './schemas.js';

export const startCallRoutes = {
  startCall: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call',
    summary: 'Start a call',
    description:
      'Start an outbound call: member, or API key with scope start_call; Idempotency-Key supported',
    auth: 'user_or_api_key',
    scope: 'start_call',
    body: calling.StartCallBody,
    response: calling.CallCreateResponse,
    idempotency: 'route',
    errors: {
      402: 'Insufficient credits',
      409: 'The same Idempotency-Key is still being served',
      429: 'Too many concurrent calls in the workspace (Retry-After)',
    },
    access: { table: 'readwrite', sendsTo: ['calls'] },
  }),
};

export const callRoutes = {
  listCalls: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/calls',
    summary: 'List calls',
    description:
      'The call log, newest first; filters status, agent_id, direction, campaign_id, contact_id (a contact’s ' +
      'calls), from, to, end_reason, channel, answered_by, agent_version (viewer). The log is merged from ' +
      'several partitions; when one of them does not answer the page is refused (503, `Retry-After: 1`) ' +
      'rather than answered without its calls',
    auth: 'user_or_api_key',
    scope: 'calls:read',
    query: calling.ListCallsQuery,
    response: calling.CallList,
    errors: { 503: 'One of the log’s partitions did not answer (`Retry-After: 1`): nothing is listed' },
    access: { table: 'readwrite' },
  }),
  getCall: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/calls/{call_id}',
    summary: 'Get a call',
    description: 'A call: status history, transcript, duration, credits, recording (viewer)',
    auth: 'user_or_api_key',
    scope: 'calls:read',
    response: calling.CallDetailResponse,
    access: { table: 'readwrite' },
  }),
  hangupCall: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/calls/{call_id}/hangup',
    summary: 'Hang up a call',
    description: 'End a call that has not ended (member)',
    auth: 'user_or_api_key',
    scope: 'start_call',
    response: calling.CallDetailResponse,
    successStatus: 200,
    errors: { 409: 'The call has ended already' },
    access: { table: 'readwrite', sendsTo: ['postCall', 'workspaceEvents'], secrets: ['telephony'] },
  }),
  createWebCall: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}/web-call',
    summary: 'Start a voice call from the browser',
    description:
      "A voice test call from the dashboard, created at once (`channel: web`, inbound, status `created`, counted in the workspace's concurrent calls, billed by wall-clock at the call rate once it ends). `transport: twilio` (a deployment with a Twilio API key and TwiML App): `token` is a Twilio Access Token for `@twilio/voice-sdk`; `transport: browser`: open `relay_url` with `?channel=web&ticket=<ticket>` and play ConversationRelay's part in the page. Not connected by `expires_at` (60 s), the call ends `failed` with `end_reason: not_connected`, unbilled (member; a user's token only)",
    auth: 'user',
    body: calling.WebCallBody,
    response: calling.WebCallResponse,
    successStatus: 201,
    errors: {
      402: 'Insufficient credits',
      429: 'Too many concurrent calls in the workspace (Retry-After)',
    },
    access: { table: 'readwrite', secrets: ['telephony', 'twilio-api-key'] },
  }),
  getCallRecording: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/calls/{call_id}/recording',
    summary: 'Get a call recording',
    description: 'Redirect (302) to a short-lived signed URL of the recording (viewer)',
    auth: 'user_or_api_key',
    scope: 'calls:read',
    successStatus: 302,
    access: { table: 'readwrite', bucket: 'read' },
  }),
};
