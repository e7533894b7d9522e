import type { HttpResponse } from './types.js';

export function jsonResponse(
  status: number,
  body: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): HttpResponse {
  const hasBody = body !== undefined && status !== 204;
  return {
    statusCode: status,
    headers: {
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      'x-request-id': requestId,
      ...headers,
    },
    body: hasBody ? JSON.stringify(body) : '',
  };
}
