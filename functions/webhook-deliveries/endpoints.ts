import { isIP } from 'node:net';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { isConditionFailure } from '../platform/table.js';
import type { WorkspaceEventType } from '../platform/workspace-events.js';
import { isAllowedHost } from './allow-list.js';
import { enableEndpoint } from './deliveries.js';
import { EventEndpointEntity, readEventEndpoint, type EventEndpoint } from './entities.js';
import { refusalReason } from './http-attempt.js';
import { allowedHosts, requireHttps } from './settings.js';

/**
 * Webhook endpoints (docs/api.md "Workspace webhook endpoints"): URLs of a workspace that receive the
 * workspace events of the types they subscribe to, signed with the workspace's webhook secret and
 * delivered by the same machinery as the post-call webhook. A workspace has at most
 * MAX_EVENT_ENDPOINTS of them, each URL once (both checked on the endpoints read just before the
 * write: two simultaneous creates may pass both checks, which only costs a duplicate the customer can
 * delete).
 */

export const ENDPOINT_NOT_FOUND = 'Webhook endpoint not found';
export const MAX_EVENT_ENDPOINTS = 20;
export const MAX_URL_LENGTH = 2048;

/**
 * Why a URL cannot be a webhook endpoint, or undefined: an http(s) URL (https only in the cloud, as
 * the post-call webhook's), without credentials, and not a literal loopback, private or link-local
 * address unless WEBHOOK_ALLOWED_HOSTS names it (names are checked when each attempt connects, by
 * http-attempt.ts, which also covers names that resolve to such addresses).
 */
export function endpointUrlProblem(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  const refusal = refusalReason(url, { requireHttps: requireHttps() });
  if (refusal === 'invalid URL') return 'url must be a URL';
  if (refusal === 'only https URLs are allowed') return 'url must be an https URL';
  if (refusal) return 'url must be an http(s) URL';
  const parsed = new URL(url);
  if (parsed.username || parsed.password) return 'url must not carry credentials';
  if (isInternalHost(parsed.hostname) && !isAllowedHost(parsed, allowedHosts())) {
    return 'url must not point to a loopback, private or link-local address';
  }
  return undefined;
}

function isInternalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const version = isIP(host);
  if (version === 4) {
    const [a = 0, b = 0] = host.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (version === 6) {
    return (
      host === '::' ||
      host === '::1' ||
      /^f[cd]/.test(host) ||
      /^fe[89ab]/.test(host) ||
      host.startsWith('::ffff:')
    );
  }
  return false;
}

export interface EndpointInput {
  url: string;
  eventTypes: WorkspaceEventType[];
  enabled: boolean;
}

/** Every endpoint of the workspace (at most MAX_EVENT_ENDPOINTS), oldest first. */
export async function listEventEndpoints(workspaceId: string): Promise<EventEndpoint[]> {
  const items: EventEndpoint[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: EventEndpoint[]; cursor: string | null } = await EventEndpointEntity.query
      .byWorkspace({ workspaceId })
      .go({ consistent: true, cursor });
    items.push(...page.data);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

async function getEndpoint(workspaceId: string, endpointId: string): Promise<EventEndpoint> {
  if (!isId('webhookEndpoint', endpointId)) throw notFound(ENDPOINT_NOT_FOUND);
  const { data } = await readEventEndpoint(workspaceId, endpointId);
  if (!data) throw notFound(ENDPOINT_NOT_FOUND);
  return data;
}

const urlTaken = () => conflict('The workspace has a webhook endpoint with this URL');

export async function createEventEndpoint(
  workspace: { workspaceId: string; organisationId: string },
  input: EndpointInput,
): Promise<EventEndpoint> {
  const existing = await listEventEndpoints(workspace.workspaceId);
  if (existing.length >= MAX_EVENT_ENDPOINTS) {
    throw conflict(`A workspace has at most ${MAX_EVENT_ENDPOINTS} webhook endpoints`);
  }
  if (existing.some((endpoint) => endpoint.url === input.url)) throw urlTaken();
  const now = clock.now().toISOString();
  const created = await EventEndpointEntity.create({
    workspaceId: workspace.workspaceId,
    endpointId: newId('webhookEndpoint'),
    organisationId: workspace.organisationId,
    url: input.url,
    eventTypes: input.eventTypes,
    enabled: input.enabled,
    createdAt: now,
    updatedAt: now,
  }).go();
  // The customer names this URL again: a 410 that disabled it for the workspace is forgiven.
  if (input.enabled) await enableEndpoint(workspace.workspaceId, input.url);
  return created.data as EventEndpoint;
}

export async function updateEventEndpoint(
  workspaceId: string,
  endpointId: string,
  input: Partial<EndpointInput>,
): Promise<EventEndpoint> {
  const current = await getEndpoint(workspaceId, endpointId);
  if (input.url !== undefined && input.url !== current.url) {
    const others = await listEventEndpoints(workspaceId);
    if (others.some((endpoint) => endpoint.endpointId !== endpointId && endpoint.url === input.url)) {
      throw urlTaken();
    }
  }
  const set = {
    updatedAt: clock.now().toISOString(),
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.eventTypes !== undefined ? { eventTypes: input.eventTypes } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
  };
  const updated = await EventEndpointEntity.patch({ workspaceId, endpointId })
    .set(set)
    .go({ response: 'all_new' })
    .catch((error: unknown) => {
      // Deleted between the read and the write.
      if (isConditionFailure(error)) throw notFound(ENDPOINT_NOT_FOUND);
      throw error;
    });
  const endpoint = updated.data as EventEndpoint;
  // Enabling (or pointing at a new URL) forgives a 410 that disabled the URL for the workspace.
  if (endpoint.enabled && (input.enabled === true || input.url !== undefined)) {
    await enableEndpoint(workspaceId, endpoint.url);
  }
  return endpoint;
}

export async function deleteEventEndpoint(workspaceId: string, endpointId: string): Promise<void> {
  await getEndpoint(workspaceId, endpointId);
  await EventEndpointEntity.delete({ workspaceId, endpointId }).go();
}

/** The wire shape of docs/api.md. */
export function endpointToWire(endpoint: EventEndpoint) {
  return {
    id: endpoint.endpointId,
    url: endpoint.url,
    event_types: endpoint.eventTypes as WorkspaceEventType[],
    enabled: endpoint.enabled,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
  };
}
