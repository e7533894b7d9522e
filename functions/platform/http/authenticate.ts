import type { MiddlewareObj } from '@middy/core';
import { forbidden } from '../errors.js';
import { authenticateBearer } from '../auth/authenticate-bearer.js';
import type { ApiKeyScope } from '../auth/principal.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';
import type { RouteAuth } from './route.js';

export const API_KEY_WRONG_WORKSPACE = 'API key not authorized for this workspace';
export const apiKeyLacksScope = (scope: string) => `API key lacks required scope: ${scope}`;
/** 403 of an API key on a route for dashboard users only (identity, organisations, keys, workflows). */
export const USERS_ONLY = "API keys cannot be used here: this route takes a signed-in user's token";
/** 403 of a user's token on a route that takes an API key only (the external workflow trigger). */
export const apiKeyRequired = (scope?: string) =>
  `This route takes an API key${scope ? ` with scope ${scope}` : ''}, not a user's token`;

/**
 * The one authentication step of every route: a missing or bad credential is 401; a credential of
 * the wrong kind for the route is 403; an API key is then checked against the workspace in the path
 * (403) and the route's scope (403). Every 403 says why.
 */
export const authenticate = (options: {
  mode: RouteAuth;
  scope?: ApiKeyScope;
}): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'authenticate',
  before: async (request) => {
    if (options.mode === 'none') return;
    const headers = request.event.headers ?? {};
    const authorization = headers.authorization ?? headers.Authorization;
    const principal = await authenticateBearer(authorization);
    if (principal.kind === 'user' && options.mode === 'api_key')
      throw forbidden(apiKeyRequired(options.scope));
    if (principal.kind === 'api_key') {
      if (options.mode === 'user') throw forbidden(USERS_ONLY);
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
