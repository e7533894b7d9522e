import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { entityConfig } from '../platform/table.js';
import { primaryIndex, gsi1, gsi2 } from '../platform/keys.js';
import { ORGANISATION_ROLES, WORKSPACE_ROLES } from './authorization.js';

/**
 * Organisations, workspaces and memberships. Access patterns (key → use):
 *   organisation            pk ORG#<org>   sk ORG
 *   org member              pk ORG#<org>   sk MEMBER#<usr>         gsi1 USER#<usr>#ORGS / <org>     (my organisations)
 *   invitation (pending)    pk ORG#<org>   sk INVITE#<email>       gsi1 INVITEE#<email> / <org>   (my invitations)
 *                                                                 gsi2 INVITATION#<inv> / INVITATION (by id)
 *   workspace               pk WS#<ws>     sk WORKSPACE            gsi1 ORG#<org>#WORKSPACES / <ws>
 *   workspace member        pk WS#<ws>     sk MEMBER#<usr>         gsi1 USER#<usr>#WORKSPACES / <ws>
 *                           (query pk WS#<ws> sk begins MEMBER#: the workspace's explicit roles)
 *   org members             query pk ORG#<org> sk begins MEMBER# (members list, workspace member view)
 *   pending invitations     query pk ORG#<org> sk begins INVITE# (members list: the pending ones)
 *   workspaces of org       gsi1 ORG#<org>#WORKSPACES (workspace list)
 * One invitation record per (organisation, email): resending reuses it, so there is never a second
 * member record for the same address.
 */
const cfg = entityConfig();

export const OrganisationEntity = new Entity(
  {
    model: { entity: 'organisation', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      ownerUserId: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['organisationId'], 'ORG#${organisationId}', [], 'ORG'),
    },
  },
  cfg,
);

export const OrgMemberEntity = new Entity(
  {
    model: { entity: 'orgMember', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      userId: { type: 'string', required: true },
      email: { type: 'string', required: true },
      role: { type: ORGANISATION_ROLES, required: true },
      status: { type: ['pending', 'accepted'] as const, required: true },
      joinedAt: { type: 'string', required: true },
    },
    indexes: {
      byOrganisation: primaryIndex(
        ['organisationId'],
        'ORG#${organisationId}',
        ['userId'],
        'MEMBER#${userId}',
      ),
      byUser: gsi1(['userId'], 'USER#${userId}#ORGS', ['organisationId'], '${organisationId}'),
    },
  },
  cfg,
);

export const InvitationEntity = new Entity(
  {
    model: { entity: 'invitation', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      email: { type: 'string', required: true },
      invitationId: { type: 'string', required: true },
      role: { type: ['regular', 'admin'] as const, required: true },
      workspaces: {
        type: 'list',
        items: {
          type: 'map',
          properties: {
            workspaceId: { type: 'string', required: true },
            role: { type: WORKSPACE_ROLES, required: true },
          },
        },
      },
      status: { type: ['pending', 'accepted'] as const, required: true },
      invitedBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      lastSentAt: { type: 'string' },
      sendCount: { type: 'number' },
      emailSent: { type: 'boolean' },
      acceptedBy: { type: 'string' },
      acceptedAt: { type: 'string' },
    },
    indexes: {
      byOrganisation: primaryIndex(['organisationId'], 'ORG#${organisationId}', ['email'], 'INVITE#${email}'),
      byInvitee: gsi1(['email'], 'INVITEE#${email}', ['organisationId'], '${organisationId}'),
      byId: gsi2(['invitationId'], 'INVITATION#${invitationId}', [], 'INVITATION'),
    },
  },
  cfg,
);

/** The country of a workspace that has not chosen one (phone numbers in national form are read in it). */
export const DEFAULT_WORKSPACE_COUNTRY = 'AU';

export const WorkspaceEntity = new Entity(
  {
    model: { entity: 'workspace', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      timezone: { type: 'string', required: true, default: 'UTC' },
      /**
       * ISO 3166 alpha-2: phone numbers typed in national form (contacts) are read in this country.
       * Absent on workspaces made before it existed, which read as DEFAULT_WORKSPACE_COUNTRY.
       */
      country: { type: 'string', default: DEFAULT_WORKSPACE_COUNTRY },
      hotReplyAlertRecipients: { type: 'list', items: { type: 'string' }, default: () => [] },
      concurrentCallLimit: { type: 'number', required: true, default: 10 },
      /** Calls not yet ended; raised and lowered in the same transactions that start and end calls. */
      activeCalls: { type: 'number', required: true, default: 0 },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
      deletedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', [], 'WORKSPACE'),
      byOrganisation: gsi1(
        ['organisationId'],
        'ORG#${organisationId}#WORKSPACES',
        ['workspaceId'],
        '${workspaceId}',
      ),
    },
  },
  cfg,
);

export const WorkspaceMemberEntity = new Entity(
  {
    model: { entity: 'workspaceMember', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      userId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      role: { type: WORKSPACE_ROLES, required: true },
      addedAt: { type: 'string', required: true },
    },
    indexes: {
      byWorkspace: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['userId'], 'MEMBER#${userId}'),
      byUser: gsi1(['userId'], 'USER#${userId}#WORKSPACES', ['workspaceId'], '${workspaceId}'),
    },
  },
  cfg,
);

/**
 * Identity provider events already applied (the identity webhook): written in the same transaction
 * as the change they caused, with a condition, so a redelivered event changes nothing. Expire after
 * 30 days (TTL attribute `expires_at`).
 *   identity event   pk IDENTITYEVENT#<event id>   sk EVENT
 */
export const IdentityEventEntity = new Entity(
  {
    model: { entity: 'identityEvent', version: '1', service: 'va' },
    attributes: {
      eventId: { type: 'string', required: true },
      subject: { type: 'string', required: true },
      outcome: { type: ['created', 'updated', 'unchanged'] as const, required: true },
      receivedAt: { type: 'string', required: true },
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byId: primaryIndex(['eventId'], 'IDENTITYEVENT#${eventId}', [], 'EVENT'),
    },
  },
  cfg,
);

export const accessService = new Service(
  {
    organisation: OrganisationEntity,
    orgMember: OrgMemberEntity,
    invitation: InvitationEntity,
    workspace: WorkspaceEntity,
    workspaceMember: WorkspaceMemberEntity,
  },
  cfg,
);

export type Workspace = EntityItem<typeof WorkspaceEntity>;

/** The workspace's country (ISO 3166 alpha-2), `AU` for workspaces made before the setting existed. */
export const workspaceCountry = (workspace: Pick<Workspace, 'country'>): string =>
  workspace.country ?? DEFAULT_WORKSPACE_COUNTRY;
export type OrgMember = EntityItem<typeof OrgMemberEntity>;
