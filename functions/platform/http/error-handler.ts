import type { MiddlewareObj } from '@middy/core';
import { HttpError, INTERNAL_ERROR_MESSAGE, ValidationError } from '../errors.js';
import { accessDenial } from '../grants.js';
import { logger } from '../logger.js';
import { jsonResponse } from './response.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

/**
 * Maps thrown errors to the documented bodies: HttpError → `{error}` (with its `details` beside it:
 * a 409's `contact_id`), ValidationError → 422 `{detail}`, anything else → 500 with the documented
 * message and the cause in the log only.
 */
export const errorHandler = (): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'errorHandler',
  onError: (request) => {
    const error = request.error;
    const requestId = request.context.state?.requestId ?? 'unknown';
    if (error instanceof ValidationError) {
      request.response = jsonResponse(422, { detail: error.detail }, requestId);
    } else if (error instanceof HttpError) {
      if (error.status >= 500) logger.error('request failed', { error });
      request.response = jsonResponse(
        error.status,
        { ...error.details, error: error.message },
        requestId,
        error.headers,
      );
    } else {
      // A grant the function lacks (refused locally as IAM would): the log says what to declare.
      const denial = accessDenial(error);
      if (denial) logger.error(`access denied: ${denial.summary}`, { error });
      else logger.error('unhandled error', { error: error ?? undefined });
      request.response = jsonResponse(500, { error: INTERNAL_ERROR_MESSAGE }, requestId);
    }
  },
});
