import { domainHandler } from '../platform/http/index.js';
import { webhookDeliveryRoutes } from './routes.js';
import { handler as testPostCallAction } from './handlers/test-post-call-action.js';
import { handler as getWebhookSecret } from './handlers/get-webhook-secret.js';
import { handler as rotateWebhookSecret } from './handlers/rotate-webhook-secret.js';
import { handler as listWebhookDeliveries } from './handlers/list-webhook-deliveries.js';
import { handler as resendWebhookDelivery } from './handlers/resend-webhook-delivery.js';
import { handler as createWebhookEndpoint } from './handlers/create-webhook-endpoint.js';
import { handler as listWebhookEndpoints } from './handlers/list-webhook-endpoints.js';
import { handler as updateWebhookEndpoint } from './handlers/update-webhook-endpoint.js';
import { handler as deleteWebhookEndpoint } from './handlers/delete-webhook-endpoint.js';

/** The webhook-deliveries domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(webhookDeliveryRoutes, {
  testPostCallAction,
  getWebhookSecret,
  rotateWebhookSecret,
  listWebhookDeliveries,
  resendWebhookDelivery,
  createWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
});
