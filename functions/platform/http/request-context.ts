import type { MiddlewareObj } from '@middy/core';
import { randomUUID } from 'node:crypto';
import { logger } from '../logger.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

/** Gives every request an id (API Gateway's, else a new one) and tags the logs with it. */
export const requestContext = (): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'requestContext',
  before: (request) => {
    const requestId = request.event.requestContext?.requestId || randomUUID();
    request.context.state = { requestId };
    logger.resetKeys();
    logger.appendKeys({ request_id: requestId, route: request.event.routeKey });
  },
});
