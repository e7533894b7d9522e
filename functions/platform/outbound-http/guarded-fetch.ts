import * as http from 'node:http';
import * as https from 'node:https';
import type { AllowedHost } from './allow-list.js';
import { connectionAgent, isRefusedAddress, refusalReason } from './http-attempt.js';

/**
 * A `fetch` for libraries that speak HTTP to a customer's server themselves (the MCP client's
 * Streamable HTTP transport): every request goes through the outbound HTTP client's connection agents, so
 * the SSRF rules of http-attempt.ts hold for it too (private, loopback, link-local and metadata
 * addresses refused when the connection is made, after DNS, except the allow-list; https only in the
 * cloud; redirects returned, never followed). Each response body is streamed (server-sent events work)
 * and fails once it passes `maxResponseBytes`. `signal` aborts every request made through it.
 */

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface GuardedFetchOptions {
  allowedHosts: readonly AllowedHost[];
  requireHttps: boolean;
  /** Bytes one response may carry (its stream errors past it). */
  maxResponseBytes: number;
  signal?: AbortSignal;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException('The operation was aborted', 'AbortError');

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('guardedFetch sends string or byte bodies only');
}

export function guardedFetch(options: GuardedFetchOptions): FetchLike {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const href = input instanceof URL ? input.href : String(input);
      const refusal = refusalReason(href, { requireHttps: options.requireHttps });
      if (refusal) {
        reject(new TypeError(`refused: ${refusal}`));
        return;
      }
      const signals = [init.signal, options.signal].filter((s): s is AbortSignal => !!s);
      const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      let body: string | Uint8Array | undefined;
      try {
        body = requestBody(init.body);
      } catch (error) {
        reject(error);
        return;
      }
      const url = new URL(href);
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: init.method ?? 'GET',
        agent: connectionAgent(url, options.allowedHosts),
        headers,
      });
      const onAbort = () => request.destroy(abortError(signal as AbortSignal) as Error);
      signal?.addEventListener('abort', onAbort, { once: true });

      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
          responseHeaders.append(response.rawHeaders[i], response.rawHeaders[i + 1]);
        }
        if (NULL_BODY_STATUSES.has(status) || init.method === 'HEAD') {
          response.resume();
          signal?.removeEventListener('abort', onAbort);
          resolve(
            new Response(null, { status, statusText: response.statusMessage, headers: responseHeaders }),
          );
          return;
        }
        let received = 0;
        let open = true;
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            const close = (error?: unknown) => {
              if (!open) return;
              open = false;
              signal?.removeEventListener('abort', onAbort);
              if (error === undefined) controller.close();
              else controller.error(error);
            };
            response.on('data', (chunk: Buffer) => {
              if (!open) return;
              received += chunk.length;
              if (received > options.maxResponseBytes) {
                response.destroy();
                close(new Error(`response larger than ${options.maxResponseBytes} bytes`));
                return;
              }
              controller.enqueue(new Uint8Array(chunk));
            });
            response.on('end', () => close());
            response.on('error', (error) => close(error));
            response.on('close', () =>
              close(
                signal?.aborted
                  ? abortError(signal)
                  : response.complete
                    ? undefined
                    : new Error('the connection closed before the response ended'),
              ),
            );
          },
          cancel() {
            open = false;
            signal?.removeEventListener('abort', onAbort);
            response.destroy();
          },
        });
        resolve(
          new Response(stream, { status, statusText: response.statusMessage, headers: responseHeaders }),
        );
      });
      request.on('error', (error: Error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(
          isRefusedAddress(error) ? new TypeError(`refused: address not allowed (${error.message})`) : error,
        );
      });
      request.end(body);
    });
}
