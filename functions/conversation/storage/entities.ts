import type { EntityItem } from 'electrodb';
import { CallEntity } from '../../calling/entities.js';
import { Entity, Service } from '../../platform/entity.js';
import { primaryIndex } from '../../platform/keys.js';
import { entityConfig } from '../../platform/table.js';
import { CallToolsEntity } from './call-tools.js';
import { emptyState, type ConversationSetup } from '../engine/model.js';

/**
 * A conversation while it goes on, found by the socket it runs on (every frame names its connection).
 * Access patterns:
 *   conversation   pk CONVERSATION#<connection id>   sk CONVERSATION   (get on every frame; a
 *                                                                       conditional put on `version`
 *                                                                       for every change; a turn's
                                                                       start on the cloud path: one
                                                                       update appending to `pending`,
                                                                       returning the item; TTL 1 day)
 * One session per call: the call item's `relayConnectionId` is set with a condition in the same
 * transaction that creates this item (relay.ts). The setup and the state are JSON: the engine's own
 * shapes (model.ts), read and written whole.
 */
export const ConversationEntity = new Entity(
  {
    model: { entity: 'conversation', version: '1', service: 'va' },
    attributes: {
      connectionId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      channel: { type: ['phone', 'web'] as const, required: true },
      /** The provider's call id (a phone call), checked again on every frame's session. */
      providerCallId: { type: 'string' },
      setup: { type: 'string', required: true },
      state: { type: 'string', required: true },
      generation: { type: 'number', required: true },
      version: { type: 'number', required: true },
      /**
       * Turn starts written without a read (`TableConversationStore.beginTurn`: appended, with the
       * generation and version added, in one UpdateItem), each a TurnStart as JSON; folded into `state`
       * by whoever reads the item, and emptied by the next read-modify-write.
       */
      pending: { type: 'list', items: { type: 'string' } },
      createdAt: { type: 'string', required: true },
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byConnection: primaryIndex(['connectionId'], 'CONVERSATION#${connectionId}', [], 'CONVERSATION'),
    },
  },
  entityConfig(),
);

export type ConversationItem = EntityItem<typeof ConversationEntity>;

/** The conversation and the call it belongs to, written together when a session starts. */
export const conversationService = new Service(
  { conversation: ConversationEntity, call: CallEntity, callTools: CallToolsEntity },
  entityConfig(),
);

/** A session's new conversation: its setup, the state the greeting opens, generation and version 0. */
export function newConversation(input: {
  connectionId: string;
  workspaceId: string;
  callId: string;
  channel: 'phone' | 'web';
  /** The provider's call id (a phone call). */
  providerCallId?: string;
  setup: ConversationSetup;
  createdAt: string;
  expiresAt: number;
}) {
  const { setup, providerCallId, ...rest } = input;
  return {
    ...rest,
    ...(providerCallId ? { providerCallId } : {}),
    setup: JSON.stringify(setup),
    state: JSON.stringify(emptyState(setup.greeting)),
    generation: 0,
    version: 0,
  };
}
