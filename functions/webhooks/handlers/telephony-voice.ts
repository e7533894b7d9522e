import middy from '@middy/core';
import { handleVoiceWebhook } from '../../calling/voice-webhook.js';
import { HttpError } from '../../platform/errors.js';
import { errorHandler } from '../../platform/http/error-handler.js';
import { requestContext } from '../../platform/http/request-context.js';
import type { HttpContext, HttpEvent, HttpResponse } from '../../platform/http/types.js';
import { SIGNATURE_HEADER } from '../../providers/telephony/twilio-format.js';

/**
 * `POST /webhooks/telephony/voice` (a function URL): call status callbacks, recording callbacks and
 * inbound calls from the telephony provider, form-encoded and signed with `X-Twilio-Signature` over
 * the URL it requested. A bad signature is 401 and changes nothing.
 */
export const handler = middy<HttpEvent, HttpResponse, Error, HttpContext>()
  .use(requestContext())
  .use(errorHandler())
  .handler(async (event, context) => {
    const method = event.requestContext?.http?.method ?? 'POST';
    if (method !== 'POST') throw new HttpError(405, 'Method not allowed', { allow: 'POST' });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
    const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const params: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(body)) params[name] = value;
    const query: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(event.rawQueryString ?? '')) query[name] = value;
    // The URL the provider requested (and signed): the function URL's host, path and query string.
    const proto = headers['x-forwarded-proto'] ?? 'https';
    const host = headers.host ?? event.requestContext?.domainName ?? '';
    const url = `${proto}://${host}${event.rawPath ?? '/'}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
    const result = await handleVoiceWebhook({ url, query, params, signature: headers[SIGNATURE_HEADER] });
    return {
      statusCode: result.status,
      headers: { 'content-type': result.contentType, 'x-request-id': context.state.requestId },
      body: result.body,
    };
  });
