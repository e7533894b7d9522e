import type { HttpResponse, HttpResult, RawBody } from './types.js';

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

/** A response whose body is not JSON: the page or script as is, with its content type. */
export function rawResponse(
  status: number,
  raw: RawBody,
  requestId: string,
  headers: Record<string, string> = {},
): HttpResponse {
  return {
    statusCode: status,
    headers: { 'content-type': raw.contentType, 'x-request-id': requestId, ...headers },
    body: raw.body,
    ...(raw.isBase64Encoded ? { isBase64Encoded: true } : {}),
  };
}

/** A handler's result as API Gateway's response: JSON unless the handler gave a raw body. */
export const resultResponse = (result: HttpResult, requestId: string): HttpResponse =>
  result.raw
    ? rawResponse(result.status, result.raw, requestId, result.headers)
    : jsonResponse(result.status, result.body, requestId, result.headers);
