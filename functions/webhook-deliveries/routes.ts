import { defineRoute } from '../platform/http/route.js';
import * as webhooks from './schemas.js';

const ENDPOINTS = '/api/v1/workspaces/{workspace_id}/webhook-endpoints';
const ENDPOINT = `${ENDPOINTS}/{endpoint_id}`;

export const webhookDeliveryRoutes = {
  testPostCallAction: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}/post-call-actions/{action_id}/test',
    summary: 'Send a test post-call webhook',
    description:
      "Send a signed test payload to a webhook action's URL now; returns the attempt (members; dashboard users)",
    auth: 'user',
    body: webhooks.TestActionBody,
    response: webhooks.TestActionResponse,
    errors: { 409: 'The action is not a webhook, or has no valid URL' },
    access: { table: 'readwrite', email: true },
  }),
  getWebhookSecret: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/webhook-secret',
    summary: 'Get the webhook signing secret',
    description:
      "The workspace's webhook signing secret (whsec_…), made on first read (members; dashboard users)",
    auth: 'user',
    response: webhooks.WebhookSecretResponse,
    access: { table: 'readwrite' },
  }),
  rotateWebhookSecret: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/webhook-secret',
    summary: 'Rotate the webhook signing secret',
    description:
      'Rotate the webhook signing secret; the old one keeps signing for 24 h (members; dashboard users)',
    auth: 'user',
    response: webhooks.WebhookSecretResponse,
    access: { table: 'readwrite' },
  }),
  listWebhookDeliveries: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/webhook-deliveries',
    summary: 'List webhook deliveries',
    description:
      'Webhook deliveries, newest first, with every attempt; filters call_id, endpoint_id (any workspace role; API key: calls:read)',
    auth: 'user_or_api_key',
    scope: 'calls:read',
    query: webhooks.ListDeliveriesQuery,
    response: webhooks.DeliveryList,
    // Authenticating writes (a new user's profile, an API key's last_used_at), so even a read is readwrite.
    access: { table: 'readwrite' },
  }),
  resendWebhookDelivery: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/webhook-deliveries/{delivery_id}/resend',
    summary: 'Resend a webhook delivery',
    description:
      'Send a delivery again now, same webhook-id; returns the delivery (members; dashboard users)',
    auth: 'user',
    response: webhooks.DeliveryResponse,
    errors: { 409: 'A delivery attempt is already in progress' },
    access: { table: 'readwrite', email: true },
  }),
  createWebhookEndpoint: defineRoute({
    method: 'POST',
    path: ENDPOINTS,
    summary: 'Create a webhook endpoint',
    description:
      'Subscribe a URL to workspace events: {url, event_types, enabled}; signed with the workspace webhook ' +
      'secret and delivered like the post-call webhook (member; API key: webhooks:write)',
    auth: 'user_or_api_key',
    scope: 'webhooks:write',
    body: webhooks.CreateEndpointBody,
    response: webhooks.EndpointResponse,
    errors: { 409: 'The workspace has an endpoint with this URL, or has the most endpoints it may' },
    access: { table: 'readwrite' },
  }),
  listWebhookEndpoints: defineRoute({
    method: 'GET',
    path: ENDPOINTS,
    summary: 'List webhook endpoints',
    description: "The workspace's webhook endpoints, oldest first (viewer; API key: webhooks:read)",
    auth: 'user_or_api_key',
    scope: 'webhooks:read',
    response: webhooks.EndpointList,
    access: { table: 'readwrite' },
  }),
  updateWebhookEndpoint: defineRoute({
    method: 'PATCH',
    path: ENDPOINT,
    summary: 'Update a webhook endpoint',
    description:
      'Change a webhook endpoint: url, event_types (replaced), enabled; enabling it again clears a 410 ' +
      'that disabled the URL (member; API key: webhooks:write)',
    auth: 'user_or_api_key',
    scope: 'webhooks:write',
    body: webhooks.UpdateEndpointBody,
    response: webhooks.EndpointResponse,
    errors: { 409: 'The workspace has an endpoint with this URL' },
    access: { table: 'readwrite' },
  }),
  deleteWebhookEndpoint: defineRoute({
    method: 'DELETE',
    path: ENDPOINT,
    summary: 'Delete a webhook endpoint',
    description:
      'Delete a webhook endpoint; its deliveries stay in the log, retries not yet made are not (member; API key: webhooks:write)',
    auth: 'user_or_api_key',
    scope: 'webhooks:write',
    successStatus: 204,
    access: { table: 'readwrite' },
  }),
};
