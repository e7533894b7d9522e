import type { MiddlewareObj } from '@middy/core';
import type { ZodType } from 'zod';
import { parseRequestParts } from '../validation.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';
import { viewerBeforeValidation } from './write-guard.js';

/** Validates query and body with the route's zod schemas; all failures together in one 422. */
export const validate = (schemas: {
  body?: ZodType;
  query?: ZodType;
}): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'validate',
  before: (request) =>
    viewerBeforeValidation(request, () => {
      const { state } = request.context;
      const parsed = parseRequestParts({
        // A raw body (the route's `rawBody` types) is the handler's to read.
        body: schemas.body && !state.raw ? { schema: schemas.body, value: state.body } : undefined,
        query: schemas.query
          ? { schema: schemas.query, value: request.event.queryStringParameters ?? {} }
          : undefined,
      });
      state.body = parsed.body;
      state.query = parsed.query;
    }),
});
