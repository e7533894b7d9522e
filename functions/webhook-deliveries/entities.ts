import { Entity } from '../platform/entity.js';
import type { MoveTarget } from '../platform/key-moves.js';
import { entityConfig, entityKey, type StoredItem, type TableKey } from '../platform/table.js';
import { primaryIndex, gsi1, gsi2 } from '../platform/keys.js';

/**
 * Outbound webhooks of a workspace. Access patterns (key → use):
 *   signing secret     pk WS#<ws>   sk WEBHOOKSECRET                 (read/rotate; one per workspace)
 *   delivery           pk WS#<ws>#WHDELIVERY#<dlv>  sk WHDELIVERY#<dlv>  (one event sent: payload,
 *                                                                   state, every attempt)
 *                      gsi2 WS#<ws>#WHDELIVERIES / <dlv>            (the workspace's, newest first)
 *                      gsi1 WS#<ws>#CALL#<call>#WHDELIVERIES / <dlv> (deliveries of one call)
 *   endpoint state     pk WS#<ws>   sk WHENDPOINT#<sha256(url)>      (an endpoint disabled by a 410)
 *   event endpoint     pk WS#<ws>   sk WHEVENTENDPOINT#<whe>         (a URL subscribed to workspace
 *                                                                   event types; all read per event)
 *
 * A delivery has a partition key of its own (each is written 2–3 times: at 100 calls a second the
 * workspace's key took them over its partition's budget, docs/scale.md); the workspace's listing is
 * the index gsi2 (all attributes projected: each of a delivery's 2–3 writes, ~1–2 KB, is written there
 * too: ~600 write units a second at 100 calls a second). Those written before are at `WS#<ws>`
 * until `migrate calls` moves them (a read by id moves one first).
 *
 * A delivery's scheduled attempts are claimed with a conditional write (state pending, attempt
 * n-1 recorded, no live claim), so a redelivered or duplicated queue message never sends twice.
 */
const cfg = entityConfig();

export const DELIVERY_STATES = ['pending', 'succeeded', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
export const DELIVERY_KINDS = ['post_call', 'event', 'test'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

export const WebhookSecretEntity = new Entity(
  {
    model: { entity: 'webhookSecret', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      /** `whsec_<base64>` (Standard Webhooks format); shown to the workspace's members. */
      secret: { type: 'string', required: true },
      /** The secret before the last rotation: deliveries are signed with both until it expires. */
      previousSecret: { type: 'string' },
      previousExpiresAt: { type: 'string' },
      createdAt: { type: 'string', required: true },
      rotatedAt: { type: 'string' },
    },
    indexes: {
      byWorkspace: primaryIndex(['workspaceId'], 'WS#${workspaceId}', [], 'WEBHOOKSECRET'),
    },
  },
  cfg,
);

export const WebhookDeliveryEntity = new Entity(
  {
    model: { entity: 'webhookDelivery', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      deliveryId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      /** The Standard Webhooks `webhook-id`: the same for every attempt and every resend. */
      webhookId: { type: 'string', required: true },
      eventType: { type: 'string', required: true },
      /** `null` on the wire for test payloads; the GSI key needs a value, so tests use `-`. */
      callId: { type: 'string', required: true },
      agentId: { type: 'string' },
      actionId: { type: 'string' },
      /** `event` deliveries: the webhook endpoint (whe_…) and the workspace event (evt_…) delivered. */
      endpointId: { type: 'string' },
      eventId: { type: 'string' },
      url: { type: 'string', required: true },
      /** The exact JSON body sent on every attempt. */
      payload: { type: 'string', required: true },
      /**
       * `post_call`: a post-call webhook action's; `event`: a workspace event to a webhook endpoint
       * (both retried on the schedule); `test`: one attempt, never retried.
       */
      kind: { type: DELIVERY_KINDS, required: true },
      state: { type: DELIVERY_STATES, required: true },
      /** Scheduled attempts made so far (manual resends are not counted here). */
      scheduledAttempts: { type: 'number', required: true, default: 0 },
      /** Attempts the schedule allows in all (the retry schedule's length + 1). */
      maxAttempts: { type: 'number', required: true },
      nextAttemptAt: { type: 'string' },
      /** The highest scheduled attempt whose queue message was sent (a lost send is made good once). */
      enqueuedAttempt: { type: 'number' },
      attempts: {
        type: 'list',
        required: true,
        default: () => [],
        items: {
          type: 'map',
          properties: {
            at: { type: 'string', required: true },
            statusCode: { type: 'number' },
            latencyMs: { type: 'number', required: true },
            error: { type: 'string' },
            /** 1-based scheduled attempt, or 0 for a manual resend / test send. */
            number: { type: 'number', required: true },
            manual: { type: 'boolean', required: true },
          },
        },
      },
      /** Who is making an attempt now (token) and until when the claim holds. */
      claimToken: { type: 'string' },
      claimExpiresAt: { type: 'string' },
      /**
       * Why the delivery is dead (`exhausted`, `rejected`, `gone`, `refused`, `endpoint_disabled`;
       * `endpoint_deleted`: an event delivery's webhook endpoint was deleted meanwhile).
       */
      deadReason: { type: 'string' },
      /** The scheduled attempt whose queue message goes to the DLQ (the one that made it dead). */
      deadLetterAttempt: { type: 'number' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(
        ['workspaceId', 'deliveryId'],
        'WS#${workspaceId}#WHDELIVERY#${deliveryId}',
        ['deliveryId'],
        'WHDELIVERY#${deliveryId}',
      ),
      byWorkspace: gsi2(['workspaceId'], 'WS#${workspaceId}#WHDELIVERIES', ['deliveryId'], '${deliveryId}'),
      byCall: gsi1(
        ['workspaceId', 'callId'],
        'WS#${workspaceId}#CALL#${callId}#WHDELIVERIES',
        ['deliveryId'],
        '${deliveryId}',
      ),
    },
  },
  cfg,
);

export const WebhookEndpointEntity = new Entity(
  {
    model: { entity: 'webhookEndpoint', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      urlHash: { type: 'string', required: true },
      url: { type: 'string', required: true },
      state: { type: ['enabled', 'disabled'] as const, required: true },
      disabledAt: { type: 'string' },
      disabledReason: { type: 'string' },
      /** The delivery whose 410 disabled it. */
      disabledBy: { type: 'string' },
      updatedAt: { type: 'string', required: true },
    },
    indexes: {
      byWorkspace: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['urlHash'], 'WHENDPOINT#${urlHash}'),
    },
  },
  cfg,
);

/**
 * A workspace's webhook endpoint (docs/api.md "Workspace webhook endpoints"): a URL that receives the
 * workspace events of its `eventTypes`, while `enabled`. A workspace has a few (MAX_EVENT_ENDPOINTS),
 * so the consumer reads them all for each event with one Query.
 */
export const EventEndpointEntity = new Entity(
  {
    model: { entity: 'eventEndpoint', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      endpointId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      url: { type: 'string', required: true },
      eventTypes: { type: 'list', items: { type: 'string' }, required: true },
      enabled: { type: 'boolean', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
    },
    indexes: {
      byWorkspace: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}',
        ['endpointId'],
        'WHEVENTENDPOINT#${endpointId}',
      ),
    },
  },
  cfg,
);

/** Typed reads (ElectroDB's generic `go` does not survive `ReturnType<…['go']>`: it becomes any). */
/** Where a delivery was before it had its own key. */
export const legacyDeliveryKey = (workspaceId: string, deliveryId: string): TableKey => ({
  pk: `WS#${workspaceId}`,
  sk: `WHDELIVERY#${deliveryId}`,
});
/** Where a delivery found at the workspace's key belongs now, with its listing's keys (gsi2). */
export const deliveryTarget = (item: StoredItem): MoveTarget => {
  const workspaceId = item.workspaceId as string;
  const deliveryId = item.deliveryId as string;
  return {
    key: entityKey(WebhookDeliveryEntity.get({ workspaceId, deliveryId }).params()),
    adds: { gsi2pk: `WS#${workspaceId}#WHDELIVERIES`, gsi2sk: deliveryId },
  };
};
export const readDelivery = (workspaceId: string, deliveryId: string) =>
  WebhookDeliveryEntity.get({ workspaceId, deliveryId }).go({ consistent: true });
export const readSecret = (workspaceId: string) =>
  WebhookSecretEntity.get({ workspaceId }).go({ consistent: true });

export const readEventEndpoint = (workspaceId: string, endpointId: string) =>
  EventEndpointEntity.get({ workspaceId, endpointId }).go({ consistent: true });
export type EventEndpoint = NonNullable<Awaited<ReturnType<typeof readEventEndpoint>>['data']>;

export type WebhookDelivery = NonNullable<Awaited<ReturnType<typeof readDelivery>>['data']>;
export type DeliveryAttempt = WebhookDelivery['attempts'][number];
export type WebhookSecretRecord = NonNullable<Awaited<ReturnType<typeof readSecret>>['data']>;
