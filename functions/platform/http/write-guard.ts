import type { Principal } from '../auth/principal.js';
import { ValidationError } from '../errors.js';
import type { HttpEvent, RequestState } from './types.js';

/**
 * "A viewer's write gets 403 before any 422": the kernel checks a request's credential first, then its
 * body (json-body.ts, validate.ts), and leaves roles to the handler. So that a viewer who sends a bad
 * body is still told `Viewers have read-only access`, a body's 422 on a write to a workspace (a route
 * under `{workspace_id}`) by a user asks this guard first; it throws the 403 when the user is a viewer
 * there, and does nothing otherwise (the 422 stands; the handler decides everything else).
 *
 * The guard knows roles, which live above the kernel (functions/access): access registers it when its
 * module loads, which every workspace route's handler module imports (a domain's function imports the
 * route's module before it serves the request).
 */
export type WriteGuard = (principal: Principal, workspaceId: string) => Promise<void>;

let guard: WriteGuard | undefined;

export function registerWriteGuard(check: WriteGuard): void {
  guard = check;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Throws the guard's 403 when this request is a viewer's write; resolves otherwise. */
export async function refuseViewerWrite(request: {
  method?: string;
  principal?: Principal;
  workspaceId?: string;
}): Promise<void> {
  const { method, principal, workspaceId } = request;
  if (!guard || !principal || principal.kind !== 'user' || !workspaceId) return;
  if (!WRITES.has((method ?? '').toUpperCase())) return;
  await guard(principal, workspaceId);
}

/** Runs a body check (json-body.ts, validate.ts); its 422 goes out only once a viewer's write is refused. */
export async function viewerBeforeValidation(
  request: { event: HttpEvent; context: { state: RequestState } },
  check: () => void,
): Promise<void> {
  try {
    check();
  } catch (error) {
    if (error instanceof ValidationError)
      await refuseViewerWrite({
        method: request.event.requestContext?.http?.method,
        principal: request.context.state.principal,
        workspaceId: request.event.pathParameters?.workspace_id,
      });
    throw error;
  }
}
