import type { MiddlewareObj } from '@middy/core';
import { forbidden } from '../errors.js';
import { authenticateBearer } from '../auth/authenticate-bearer.js';
import type { ApiKeyScope } from '../auth/principal.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

export const API_KEY_WRONG_WORKSPACE = 'API key not authorized for this workspace';
export const apiKeyLacksScope = (scope: string) => `API key lacks required scope: ${scope}`;

/**
 * The one authentication step of every route: a missing or bad credential is 401; an API key is
 * then checked against the workspace in the path (403) and the route's scope (403).
 */
export const authenticate = (options: {
  mode: 'none' | 'user' | 'user_or_api_key';
  scope?: ApiKeyScope;
}): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'authenticate',
  before: async (request) => {
    if (options.mode === 'none') return;
    const headers = request.event.headers ?? {};
    const authorization = headers.authorization ?? headers.Authorization;
    const principal = await authenticateBearer(authorization);
    if (principal.kind === 'api_key') {
      if (options.mode === 'user') throw forbidden();
      const workspaceId = request.event.pathParameters?.workspace_id;
      if (workspaceId !== undefined && workspaceId !== principal.workspaceId) {
        throw forbidden(API_KEY_WRONG_WORKSPACE);
      }
      if (options.scope && !principal.scopes.includes(options.scope)) {
        throw forbidden(apiKeyLacksScope(options.scope));
      }
    }
    request.context.state.principal = principal;
  },
});
