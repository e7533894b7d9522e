import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { AgentEntity } from '../agents/entities.js';
import { entityConfig } from '../platform/table.js';
import { primaryIndex, gsi1 } from '../platform/keys.js';

/**
 * Phone numbers. Access patterns:
 *   number in workspace     pk WS#<ws>               sk NUMBER#<pn>   (get, connect, release; list a workspace's numbers)
 *   numbers of organisation gsi1 ORG#<org>#NUMBERS   <pn>             (monthly billing of extra numbers)
 *   number by E.164         pk PHONE#<e164>          sk PHONE         (the claim: created with a condition, so a
 *                                                                     number is unique across the service; inbound
 *                                                                     calls and start-call's from_phone resolve here)
 * The number record, its claim and the connected agent's `phoneNumber` are always written together in
 * one transaction.
 */
const cfg = entityConfig();

export const PhoneNumberEntity = new Entity(
  {
    model: { entity: 'phoneNumber', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      numberId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      phoneNumber: { type: 'string', required: true },
      country: { type: 'string', required: true },
      provider: { type: ['simulator', 'twilio'] as const, required: true },
      providerNumberId: { type: 'string', required: true },
      agentId: { type: 'string' },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byWorkspace: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['numberId'], 'NUMBER#${numberId}'),
      byOrganisation: gsi1(['organisationId'], 'ORG#${organisationId}#NUMBERS', ['numberId'], '${numberId}'),
    },
  },
  cfg,
);

export const PhoneClaimEntity = new Entity(
  {
    model: { entity: 'phoneClaim', version: '1', service: 'va' },
    attributes: {
      phoneNumber: { type: 'string', required: true },
      numberId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      agentId: { type: 'string' },
    },
    indexes: {
      byPhoneNumber: primaryIndex(['phoneNumber'], 'PHONE#${phoneNumber}', [], 'PHONE'),
    },
  },
  cfg,
);

/** Numbers, their claims and agents change together (connect, disconnect, release, agent delete). */
export const numberService = new Service(
  { agent: AgentEntity, phoneNumber: PhoneNumberEntity, phoneClaim: PhoneClaimEntity },
  cfg,
);

export type PhoneNumber = EntityItem<typeof PhoneNumberEntity>;
export type PhoneClaim = EntityItem<typeof PhoneClaimEntity>;
