import type { MiddlewareObj } from '@middy/core';
import { ValidationError } from '../errors.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

/** Parses a JSON body; a body that is not JSON is 422 `json_invalid`, never a 500. */
export const jsonBody = (): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'jsonBody',
  before: (request) => {
    const { event } = request;
    if (event.body === undefined || event.body === null || event.body === '') {
      request.context.state.body = undefined;
      return;
    }
    const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    try {
      request.context.state.body = JSON.parse(text);
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
  },
});
