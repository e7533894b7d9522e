import middy from '@middy/core';
import { HttpError } from '../errors.js';
import { errorHandler } from './error-handler.js';
import { requestContext, withRequestLogKeys } from './request-context.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

/** A provider's webhook request as it arrived: the exact bytes are what its signature covers. */
export interface WebhookRequest {
  requestId: string;
  rawBody: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  query: Record<string, string>;
  /** The URL the provider requested (some schemes, Twilio's among them, sign it). */
  url: string;
}

export interface WebhookResult {
  status: number;
  body: string | object;
  contentType?: string;
}

/**
 * The one way to write a provider webhook (a function URL, no bearer token): POST only, the raw body
 * handed over untouched for signature checks, the same request id and error mapping as the API.
 */
export function webhookHandler(handle: (request: WebhookRequest) => Promise<WebhookResult>) {
  const handler = middy<HttpEvent, HttpResponse, Error, HttpContext>()
    .use(requestContext())
    .use(errorHandler())
    .handler(async (event, context) => {
      const method = event.requestContext?.http?.method ?? 'POST';
      if (method !== 'POST') throw new HttpError(405, 'Method not allowed', { allow: 'POST' });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(event.headers ?? {}))
        if (value !== undefined) headers[name.toLowerCase()] = value;
      const rawBody =
        event.body === undefined || event.body === null
          ? ''
          : event.isBase64Encoded
            ? Buffer.from(event.body, 'base64').toString('utf8')
            : event.body;
      const query: Record<string, string> = {};
      for (const [name, value] of new URLSearchParams(event.rawQueryString ?? '')) query[name] = value;
      const proto = headers['x-forwarded-proto'] ?? 'https';
      const host = headers.host ?? event.requestContext?.domainName ?? '';
      const url = `${proto}://${host}${event.rawPath ?? '/'}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
      const requestId = context.state.requestId;
      const result = await handle({ requestId, rawBody, headers, query, url });
      const json = typeof result.body !== 'string';
      return {
        statusCode: result.status,
        headers: {
          'content-type': result.contentType ?? (json ? 'application/json' : 'text/plain'),
          'x-request-id': requestId,
        },
        body: json ? JSON.stringify(result.body) : (result.body as string),
      };
    });
  return withRequestLogKeys(handler);
}
