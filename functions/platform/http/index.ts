export { implement, domainHandler, type HttpRequest, type RouteHandler } from './handler.js';
export { defineRoute, routeKey, unionAccess } from './route.js';
export type { Route, RouteTable, RouteAuth, Access, HttpMethod, SecretKey } from './route.js';
export type { HttpResult, HttpEvent, HttpResponse, RawBody } from './types.js';
export { jsonResponse, rawResponse } from './response.js';
