import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../entity.js';
import { entityConfig } from '../table.js';
import { primaryIndex, gsi1 } from '../keys.js';

/**
 * Credential records, the part of identity every route needs. Access patterns:
 *   identity by subject   pk IDENTITY#<sub>          sk IDENTITY        (token → user id, once per user)
 *   user by id            pk USER#<usr>              sk PROFILE
 *   user by email         gsi1 EMAIL#<email>         USER               (invitations)
 *   API key by id         pk APIKEY#<key>            sk APIKEY          (one read per API-key request)
 *   API keys of workspace gsi1 WS#<ws>#APIKEYS       <key>
 */
const cfg = entityConfig();

export const UserIdentityEntity = new Entity(
  {
    model: { entity: 'userIdentity', version: '1', service: 'va' },
    attributes: {
      subject: { type: 'string', required: true },
      userId: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      bySubject: primaryIndex(['subject'], 'IDENTITY#${subject}', [], 'IDENTITY'),
    },
  },
  cfg,
);

export const UserEntity = new Entity(
  {
    model: { entity: 'user', version: '1', service: 'va' },
    attributes: {
      userId: { type: 'string', required: true },
      email: { type: 'string', required: true },
      name: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['userId'], 'USER#${userId}', [], 'PROFILE'),
      byEmail: gsi1(['email'], 'EMAIL#${email}', [], 'USER'),
    },
  },
  cfg,
);

export const ApiKeyEntity = new Entity(
  {
    model: { entity: 'apiKey', version: '1', service: 'va' },
    attributes: {
      keyId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      scopes: { type: 'list', items: { type: 'string' }, required: true },
      /** SHA-256 of the secret; the secret itself is never stored. */
      secretHash: { type: 'string', required: true },
      /** Last characters of the secret, to tell keys apart in a list. */
      secretHint: { type: 'string', required: true },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      rotatedAt: { type: 'string' },
      revokedAt: { type: 'string' },
      lastUsedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['keyId'], 'APIKEY#${keyId}', [], 'APIKEY'),
      byWorkspace: gsi1(['workspaceId'], 'WS#${workspaceId}#APIKEYS', ['keyId'], '${keyId}'),
    },
  },
  cfg,
);

export type ApiKey = EntityItem<typeof ApiKeyEntity>;

/**
 * An API key's item key, for the one read of every API-key request (authenticate-bearer.ts reads it
 * plainly: platform/table.ts getStoredItem); test/unit/hot-path-items.test.ts holds it to the entity's.
 */
export const apiKeyItemKey = (keyId: string) => ({ pk: `APIKEY#${keyId}`, sk: 'APIKEY' });

export const identityService = new Service({ userIdentity: UserIdentityEntity, user: UserEntity }, cfg);
