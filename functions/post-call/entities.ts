import { Entity, Service } from '../platform/entity.js';
import { legacyLayoutInUse, moveUntilDone, type MoveTarget } from '../platform/key-moves.js';
import {
  batchGetStoredItems,
  entityConfig,
  entityKey,
  type StoredItem,
  type TableKey,
} from '../platform/table.js';
import { primaryIndex } from '../platform/keys.js';

/**
 * The post-call pipeline's records. Access patterns (key → use):
 *   post-call record   pk WS#<ws>#POSTCALL#<call>  sk POSTCALL#<call>               (the call's record: built
 *                                                                                  once per call, created with
 *                                                                                  a condition)
 *   action run         pk WS#<ws>#POSTCALL#<call>  sk POSTCALL#ACTION#<act>         (one per configured action
 *                                                                                  of the call; its state
 *                                                                                  machine makes each run once)
 *   held action        pk ORG#<org>  sk HELDACTION#<ws>#<call>#<act>    (charged actions held back while billing
 *                                                                      is not in good standing; released together)
 *
 * A call's record and runs have a partition key of their own (docs/scale.md: they were ~7 of the 15
 * writes a call put on the workspace's key, `WS#<ws>`, over its partition's budget at 100 calls a
 * second in one workspace); nothing lists them by workspace. Until `migrate calls` has run, those of
 * calls that ended before are at `WS#<ws>` and are moved when read (post-call-keys.ts).
 */
const cfg = entityConfig();

export const ACTION_TYPES = [
  'sms_owner',
  'sms_caller',
  'email_summary',
  'webhook',
  'contact_update',
  'profile_enrichment',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];
/** Actions that cost money: held back while a subscription payment has failed (docs/billing.md). */
export const CHARGED_ACTIONS: readonly ActionType[] = ['sms_owner', 'sms_caller', 'email_summary'];

export const RUN_STATES = ['queued', 'held', 'running', 'succeeded', 'failed'] as const;
export type RunState = (typeof RUN_STATES)[number];

export const PostCallRecordEntity = new Entity(
  {
    model: { entity: 'postCallRecord', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      /** The call's record (the `data` of the post-call webhook), as JSON. */
      record: { type: 'string', required: true },
      /** The agent's enabled actions when the call ended, as JSON: `[{actionId, type, config}]`. */
      actions: { type: 'string', required: true },
      builtAt: { type: 'string', required: true },
      /**
       * True when the call's action runs and its memory were written in the record's own transaction
       * (every record built since), so a redelivery that finds the record has them already.
       */
      runsCreated: { type: 'boolean' },
      /**
       * Set once every action's message was sent, by a redelivery that found the record (the first
       * delivery saves the write): a later one then has nothing left to do.
       */
      actionsEnqueuedAt: { type: 'string' },
    },
    indexes: {
      byCall: primaryIndex(
        ['workspaceId', 'callId'],
        'WS#${workspaceId}#POSTCALL#${callId}',
        ['callId'],
        'POSTCALL#${callId}',
      ),
    },
  },
  cfg,
);

export const ActionRunEntity = new Entity(
  {
    model: { entity: 'postCallActionRun', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      actionId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      type: { type: ACTION_TYPES, required: true },
      /** The action's config when the call ended, as JSON. */
      config: { type: 'string', required: true },
      state: { type: RUN_STATES, required: true },
      /** Ids fixed when the run is made, so every retry names the same SMS / delivery. */
      smsId: { type: 'string' },
      deliveryId: { type: 'string' },
      claimToken: { type: 'string' },
      claimExpiresAt: { type: 'string' },
      /** Recipients already sent to (an SMS or each email), so a retry after a crash skips them. */
      sentTo: { type: 'list', items: { type: 'string' } },
      tries: { type: 'number', required: true, default: 0 },
      /** What it did, as JSON (ids of messages sent, the contact written, …). */
      result: { type: 'string' },
      error: { type: 'string' },
      heldAt: { type: 'string' },
      releasedAt: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
      completedAt: { type: 'string' },
    },
    indexes: {
      byCall: primaryIndex(
        ['workspaceId', 'callId'],
        'WS#${workspaceId}#POSTCALL#${callId}',
        ['actionId'],
        'POSTCALL#ACTION#${actionId}',
      ),
    },
  },
  cfg,
);

export const HeldActionEntity = new Entity(
  {
    model: { entity: 'heldAction', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      actionId: { type: 'string', required: true },
      heldAt: { type: 'string', required: true },
    },
    indexes: {
      byOrganisation: primaryIndex(
        ['organisationId'],
        'ORG#${organisationId}',
        ['workspaceId', 'callId', 'actionId'],
        'HELDACTION#${workspaceId}#${callId}#${actionId}',
      ),
    },
  },
  cfg,
);

export const postCallService = new Service({ actionRun: ActionRunEntity, heldAction: HeldActionEntity }, cfg);

/** The table keys of a call's record and runs, and where they were before (`WS#<ws>`, the same sort key then). */
export const postCallRecordKey = (workspaceId: string, callId: string): TableKey =>
  entityKey(PostCallRecordEntity.get({ workspaceId, callId }).params());
export const actionRunKey = (workspaceId: string, callId: string, actionId: string): TableKey =>
  entityKey(ActionRunEntity.get({ workspaceId, callId, actionId }).params());
const legacyPostCallKey = (workspaceId: string, sk: string): TableKey => ({ pk: `WS#${workspaceId}`, sk });

/** Where a record or run found at the workspace's key belongs now. */
export const postCallTarget = (item: StoredItem): MoveTarget => {
  const workspaceId = item.workspaceId as string;
  const callId = item.callId as string;
  return {
    key:
      item.__edb_e__ === 'postCallActionRun'
        ? actionRunKey(workspaceId, callId, item.actionId as string)
        : postCallRecordKey(workspaceId, callId),
  };
};

/**
 * Moves a call's record and runs still at the workspace's key (a read that found none at the call's
 * key, before `migrate calls` has run): true when the record was there.
 */
export async function moveLegacyPostCall(workspaceId: string, callId: string): Promise<boolean> {
  if (!(await legacyLayoutInUse())) return false;
  const [record] = await batchGetStoredItems([legacyPostCallKey(workspaceId, `POSTCALL#${callId}`)]);
  if (!record) return false;
  const actions = JSON.parse(String(record.actions ?? '[]')) as { actionId: string }[];
  const runs =
    actions.length === 0
      ? []
      : await batchGetStoredItems(
          actions.map((a) => legacyPostCallKey(workspaceId, `POSTCALL#${callId}#ACTION#${a.actionId}`)),
        );
  for (const item of [record, ...runs]) if (item) await moveUntilDone(item, postCallTarget);
  return true;
}

export const readPostCallRecord = (workspaceId: string, callId: string) =>
  PostCallRecordEntity.get({ workspaceId, callId }).go({ consistent: true });
export const readActionRun = (workspaceId: string, callId: string, actionId: string) =>
  ActionRunEntity.get({ workspaceId, callId, actionId }).go({ consistent: true });

export type PostCallRecordItem = NonNullable<Awaited<ReturnType<typeof readPostCallRecord>>['data']>;
export type ActionRun = NonNullable<Awaited<ReturnType<typeof readActionRun>>['data']>;
