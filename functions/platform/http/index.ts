export {
  implement,
  domainHandler,
  type DomainHandler,
  type HttpRequest,
  type RouteHandler,
  type RouteModule,
} from './handler.js';
export { defineRoute, routeKey, unionAccess } from './route.js';
export type { Route, RouteTable, RouteAuth, Access, HttpMethod, SecretKey } from './route.js';
export type { HttpResult, HttpEvent, HttpResponse, RawBody } from './types.js';
export { jsonResponse, rawResponse } from './response.js';
