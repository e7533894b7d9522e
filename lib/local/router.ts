import type { FunctionSpec, HttpMethod } from '../cloud/catalog-types.js';

/** One place a request can land: an HTTP API route of a function, or a function URL. */
export interface RouteTarget {
  fn: FunctionSpec;
  /** `GET /api/v1/agents/{agent_id}` for routes; `$default` for function URLs (as AWS sends it). */
  routeKey: string;
  /** Undefined for function URLs: they answer any method. */
  method?: HttpMethod;
  pattern: string;
  kind: 'route' | 'function-url';
}

interface Compiled extends RouteTarget {
  segments: string[];
}

export type RouteMatch =
  | { kind: 'match'; target: RouteTarget; pathParameters: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

const isParam = (segment: string) => segment.startsWith('{') && segment.endsWith('}');
const splitPath = (path: string) => path.split('/').slice(1);

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Whether `a` beats `b` for the same path: at the first segment where one is static and the other a
 * `{param}`, the static one wins; an exact route beats a function URL's prefix; else the longer pattern.
 */
function moreSpecific(a: Compiled, b: Compiled): boolean {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i += 1) {
    const aParam = isParam(a.segments[i]);
    const bParam = isParam(b.segments[i]);
    if (aParam !== bParam) return bParam;
  }
  if (a.kind !== b.kind) return a.kind === 'route';
  return a.segments.length > b.segments.length;
}

/**
 * Matches paths against every HTTP route and function URL of the catalog. Static segments beat
 * `{param}` segments; a path that matches with another method is a 405, no match at all a 404.
 * Function URL paths also take sub-paths (`/webhooks/billing/anything`), as a real function URL does.
 */
export class Router {
  private readonly compiled: Compiled[] = [];

  constructor(functions: FunctionSpec[]) {
    for (const fn of functions) {
      for (const route of fn.http ?? []) {
        this.compiled.push({
          fn,
          routeKey: `${route.method} ${route.path}`,
          method: route.method,
          pattern: route.path,
          kind: 'route',
          segments: splitPath(route.path),
        });
      }
      if (fn.functionUrl) {
        const path = fn.functionUrl.path.replace(/\/+$/, '') || '/';
        this.compiled.push({
          fn,
          routeKey: '$default',
          pattern: path,
          kind: 'function-url',
          segments: splitPath(path),
        });
      }
    }
  }

  get targets(): RouteTarget[] {
    return this.compiled.map(({ segments: _segments, ...target }) => target);
  }

  match(method: string, path: string): RouteMatch {
    const segments = splitPath(path);
    const candidates: { target: Compiled; pathParameters: Record<string, string> }[] = [];
    for (const target of this.compiled) {
      const pathParameters = matchSegments(target, segments);
      if (pathParameters) candidates.push({ target, pathParameters });
    }
    if (candidates.length === 0) return { kind: 'not-found' };
    const upper = method.toUpperCase();
    const hit = candidates
      .filter(({ target }) => target.method === undefined || target.method === upper)
      .reduce<(typeof candidates)[number] | undefined>(
        (best, next) => (best && !moreSpecific(next.target, best.target) ? best : next),
        undefined,
      );
    if (hit) {
      const { segments: _segments, ...target } = hit.target;
      return { kind: 'match', target, pathParameters: hit.pathParameters };
    }
    const allowed = [...new Set(candidates.flatMap(({ target }) => (target.method ? [target.method] : [])))];
    return { kind: 'method-not-allowed', allowed };
  }
}

function matchSegments(target: Compiled, segments: string[]): Record<string, string> | undefined {
  const pattern = target.segments;
  if (target.kind === 'function-url') {
    if (segments.length < pattern.length) return undefined;
  } else if (segments.length !== pattern.length) {
    return undefined;
  }
  const parameters: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i += 1) {
    const expected = pattern[i];
    const actual = segments[i];
    if (isParam(expected)) {
      if (actual === '') return undefined;
      parameters[expected.slice(1, -1)] = decode(actual);
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return parameters;
}
