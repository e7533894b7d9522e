import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { isConditionFailure } from '../platform/table.js';
import type { WorkspaceEventType } from '../platform/workspace-events.js';
import { enableEndpoint } from './attempts.js';
import { EventEndpointEntity, readEventEndpoint, type EventEndpoint } from './entities.js';

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
export { endpointUrlProblem, MAX_URL_LENGTH } from '../platform/outbound-http/url-guard.js';

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
