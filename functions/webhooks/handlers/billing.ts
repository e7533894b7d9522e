import middy from '@middy/core';
import { handleBillingWebhook } from '../../billing/webhooks.js';
import { HttpError } from '../../platform/errors.js';
import { errorHandler } from '../../platform/http/error-handler.js';
import { requestContext } from '../../platform/http/request-context.js';
import { jsonResponse } from '../../platform/http/response.js';
import type { HttpContext, HttpEvent, HttpResponse } from '../../platform/http/types.js';

/**
 * `POST /webhooks/billing` (a function URL): the payment provider's events, signed with Stripe's
 * scheme (`Stripe-Signature`), verified with `stripe.webhooks.constructEvent` before anything is read.
 * A forged or stale event is 401 and changes nothing; a duplicate event id changes nothing again.
 */
export const handler = middy<HttpEvent, HttpResponse, Error, HttpContext>()
  .use(requestContext())
  .use(errorHandler())
  .handler(async (event, context) => {
    const method = event.requestContext?.http?.method ?? 'POST';
    if (method !== 'POST') throw new HttpError(405, 'Method not allowed', { allow: 'POST' });
    const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const signature = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'stripe-signature')?.[1];
    const result = await handleBillingWebhook(body, signature);
    return jsonResponse(result.status, result.body, context.state.requestId);
  });
