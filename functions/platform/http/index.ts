export { httpHandler, type HttpRequest, type HttpRouteOptions } from './handler.js';
export type { HttpResult, HttpEvent, HttpResponse } from './types.js';
export { jsonResponse } from './response.js';
