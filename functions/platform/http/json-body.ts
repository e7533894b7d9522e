import type { MiddlewareObj } from '@middy/core';
import { HttpError, ValidationError } from '../errors.js';
import { jsonDepth } from '../bounded-input.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';
import { viewerBeforeValidation } from './write-guard.js';

/** Deepest nesting of objects and arrays a body may have; no route's schema needs more than a few. */
export const MAX_JSON_DEPTH = 32;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The bytes as UTF-8 text, or undefined when they are not valid UTF-8. */
function utf8(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** `application/json` and the JSON-based types (`application/problem+json`, …). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/;

/**
 * Parses a JSON body; a body that is not JSON, or nested deeper than MAX_JSON_DEPTH, is 422
 * `json_invalid`, never a 500. A body of one of `rawTypes` (the route's `rawBody`) is kept as bytes
 * in `state.raw` instead. A body declared as any other media type (`text/plain`, a form, XML) is 415:
 * the route does not take it. A body without a `Content-Type` is read as JSON.
 */
export const jsonBody = (
  rawTypes: readonly string[] = [],
): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'jsonBody',
  before: (request) =>
    viewerBeforeValidation(request, () => {
      const { event } = request;
      const header = Object.entries(event.headers ?? {}).find(
        ([name]) => name.toLowerCase() === 'content-type',
      )?.[1];
      const contentType = header?.split(';')[0].trim().toLowerCase() || undefined;
      if (contentType && rawTypes.includes(contentType)) {
        const bytes = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
        request.context.state.raw = { contentType, bytes };
        request.context.state.body = undefined;
        return;
      }
      if (event.body === undefined || event.body === null || event.body === '') {
        request.context.state.body = undefined;
        return;
      }
      if (contentType && !JSON_MEDIA_TYPE.test(contentType)) {
        throw new HttpError(
          415,
          `Unsupported media type ${contentType}: this route takes ${['application/json', ...rawTypes].join(', ')}`,
        );
      }
      const text = event.isBase64Encoded ? utf8(Buffer.from(event.body, 'base64')) : event.body;
      if (text === undefined) {
        // Not decoded with replacement characters: a body that is not UTF-8 is not JSON (RFC 8259 §8.1).
        throw new ValidationError([
          {
            type: 'json_invalid',
            loc: ['body', 0],
            msg: 'JSON decode error: the body is not valid UTF-8',
            input: {},
          },
        ]);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new ValidationError([
          {
            type: 'json_invalid',
            loc: ['body', 0],
            msg: `JSON decode error`,
            input: {},
            ...(error instanceof Error ? { ctx: { error: error.message } } : {}),
          },
        ]);
      }
      if (jsonDepth(parsed, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        throw new ValidationError([
          {
            type: 'json_invalid',
            loc: ['body', 0],
            msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
            input: {},
            ctx: { max_depth: MAX_JSON_DEPTH },
          },
        ]);
      }
      request.context.state.body = parsed;
    }),
});
