import { domainHandler } from '../platform/http/index.js';
import { webhookDeliveryRoutes } from './routes.js';

/** The webhook-deliveries domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(webhookDeliveryRoutes, {
  testPostCallAction: () => import('./handlers/test-post-call-action.js'),
  getWebhookSecret: () => import('./handlers/get-webhook-secret.js'),
  rotateWebhookSecret: () => import('./handlers/rotate-webhook-secret.js'),
  listWebhookDeliveries: () => import('./handlers/list-webhook-deliveries.js'),
  resendWebhookDelivery: () => import('./handlers/resend-webhook-delivery.js'),
  createWebhookEndpoint: () => import('./handlers/create-webhook-endpoint.js'),
  listWebhookEndpoints: () => import('./handlers/list-webhook-endpoints.js'),
  updateWebhookEndpoint: () => import('./handlers/update-webhook-endpoint.js'),
  deleteWebhookEndpoint: () => import('./handlers/delete-webhook-endpoint.js'),
});
