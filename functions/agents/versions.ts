import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { batchGetStoredItems, type StoredItem, type TableKey } from '../platform/table.js';
import { AgentEntity, AgentVersionEntity, type Agent, type AgentVersion } from './entities.js';

/**
 * Agent versions. Every change of an agent's own fields (create, PATCH, restore) writes the agent and
 * a new immutable version item in one transaction, the agent's write conditioned on the version it
 * read (agents/service.ts): two concurrent PATCHes are versions n+1 and n+2, never one lost.
 *
 * A version holds the agent's own fields generically: everything the agent item has except its keys,
 * the fields that are not the agent's behaviour (`answeringCalls`, the connected number) and
 * bookkeeping (`NOT_VERSIONED`). A field added to agents later is versioned without a change here.
 * Tools keep their header secrets by reference (`tsec_…` ids); the sealed values stay in the agent
 * item's `toolSecrets`, which keeps every value a version refers to.
 */
export const AGENT_VERSION_NOT_FOUND = 'Agent version not found';

const NOT_VERSIONED = new Set<string>([
  'workspaceId',
  'agentId',
  'organisationId',
  'answeringCalls',
  'phoneNumberId',
  'phoneNumber',
  'toolSecrets',
  'version',
  'createdBy',
  'createdAt',
  'updatedAt',
  // Keys and ElectroDB's identifiers, should a raw item be passed.
  'pk',
  'sk',
  'gsi1pk',
  'gsi1sk',
  'gsi2pk',
  'gsi2sk',
  '__edb_e__',
  '__edb_v__',
]);

export type VersionedFields = Record<string, unknown>;

/** The agent's own fields, as a version holds them. */
export function versionedFields(agent: object): VersionedFields {
  return Object.fromEntries(
    Object.entries(agent).filter(([key, value]) => !NOT_VERSIONED.has(key) && value !== undefined),
  );
}

/** JSON with object keys sorted: two values read in another key order compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

const wireName = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The wire names of the fields that differ between two versions' fields, sorted. */
export function changedFields(before: VersionedFields, after: VersionedFields): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys]
    .filter((key) => canonical(before[key]) !== canonical(after[key]))
    .map(wireName)
    .sort();
}

/**
 * The agent as it runs in a version: the live item's own identity, switch, number and tool secrets
 * with the version's fields in place of its own (a field the version does not have is absent).
 */
export function agentAsOf(live: Agent, version: Pick<AgentVersion, 'agent' | 'version'>): Agent {
  const kept = Object.fromEntries(Object.entries(live).filter(([key]) => NOT_VERSIONED.has(key)));
  return { ...kept, ...(version.agent as VersionedFields), version: version.version } as Agent;
}

/** The agent's fields that a write to version `fields` must remove (present now, absent there). */
export function fieldsToRemove(current: Agent, fields: VersionedFields): string[] {
  return Object.keys(versionedFields(current)).filter((key) => !(key in fields));
}

/** The version item to write with an agent's change. */
export function versionItem(
  agent: Pick<Agent, 'workspaceId' | 'agentId'>,
  version: number,
  fields: VersionedFields,
  changed: string[],
  createdBy: string,
  restoredFrom?: number,
): AgentVersion {
  return {
    workspaceId: agent.workspaceId,
    agentId: agent.agentId,
    version,
    agent: fields,
    changed,
    ...(restoredFrom !== undefined ? { restoredFrom } : {}),
    createdBy,
    createdAt: clock.now().toISOString(),
  };
}

/** One version of an agent, or undefined (not a positive integer, or not written). */
export async function findAgentVersion(
  workspaceId: string,
  agentId: string,
  version: number,
): Promise<AgentVersion | undefined> {
  if (!Number.isSafeInteger(version) || version < 1) return undefined;
  const { data } = await AgentVersionEntity.get({ workspaceId, agentId, version }).go();
  return data ?? undefined;
}

export async function getAgentVersion(
  workspaceId: string,
  agentId: string,
  version: number,
): Promise<AgentVersion> {
  const found = await findAgentVersion(workspaceId, agentId, version);
  if (!found) throw notFound(AGENT_VERSION_NOT_FOUND);
  return found;
}

export type AgentVersionSummary = Pick<
  AgentVersion,
  'workspaceId' | 'agentId' | 'version' | 'changed' | 'restoredFrom' | 'createdBy' | 'createdAt'
>;

/** An agent's versions, newest first, without the fields they hold. */
export async function listAgentVersions(
  workspaceId: string,
  agentId: string,
  query: ListQuery,
): Promise<Page<AgentVersionSummary>> {
  return queryPage(query.cursor, (cursor) =>
    AgentVersionEntity.query.byAgent({ workspaceId, agentId }).go({
      count: query.limit,
      cursor,
      order: 'desc',
      attributes: ['workspaceId', 'agentId', 'version', 'changed', 'restoredFrom', 'createdBy', 'createdAt'],
    }),
  );
}

/** The path's `{version}` as a number; anything but a positive integer is a version that does not exist (0). */
export const versionNumber = (raw: string): number => (/^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0);

/** A version as its list shows it. */
export function toVersionSummary(version: AgentVersionSummary): {
  agent_id: string;
  version: number;
  created_at: string;
  created_by: string;
  changed: string[];
  restored_from: number | null;
} {
  return {
    agent_id: version.agentId,
    version: version.version,
    created_at: version.createdAt,
    created_by: version.createdBy,
    changed: version.changed ?? [],
    restored_from: version.restoredFrom ?? null,
  };
}

/**
 * The agent as a call runs it: the version recorded on the call (`agentVersion`), read beside the
 * live item (its identity, number and tool secrets) in parallel. Undefined when the agent is gone. A
 * call without a version (made before versions existed) runs the agent as it is.
 */
export async function agentForCall(call: {
  workspaceId: string;
  agentId: string;
  agentVersion?: number;
}): Promise<Agent | undefined> {
  if (!validVersion(call.agentVersion)) {
    const { data } = await AgentEntity.get({ workspaceId: call.workspaceId, agentId: call.agentId }).go();
    return data ?? undefined;
  }
  // The agent and its version in one request (a call's setup, dispatch and post-call all read both).
  return (await agentForCallWith(undefined, call)).agent;
}

const validVersion = (version: number | undefined): version is number =>
  version !== undefined && Number.isSafeInteger(version) && version >= 1;

/**
 * agentForCall, with another item read in the same consistent BatchGetItem (`with`, returned as
 * stored): one request where a caller needs the agent beside, say, the call it was named by.
 */
export async function agentForCallWith(
  other: TableKey | undefined,
  call: { workspaceId: string; agentId: string; agentVersion?: number },
): Promise<{ other?: StoredItem; agent?: Agent }> {
  const { workspaceId, agentId, agentVersion } = call;
  const version = validVersion(agentVersion) ? agentVersion : undefined;
  const keys = [
    AgentEntity.get({ workspaceId, agentId }).params<{ Key: TableKey }>().Key,
    ...(version !== undefined
      ? [AgentVersionEntity.get({ workspaceId, agentId, version }).params<{ Key: TableKey }>().Key]
      : []),
    ...(other ? [other] : []),
  ];
  const items = await batchGetStoredItems(keys);
  const [liveItem, versionItem] = version !== undefined ? items : [items[0], undefined];
  const live = liveItem ? AgentEntity.parse({ Item: liveItem }).data : null;
  const kept = versionItem ? AgentVersionEntity.parse({ Item: versionItem }).data : null;
  const agent = live ? (kept ? agentAsOf(live, kept) : live) : undefined;
  return { ...(other ? { other: items.at(-1) } : {}), ...(agent ? { agent } : {}) };
}
