import { domainHandler } from '../platform/http/index.js';
import { accessRoutes } from './routes.js';
import { handler as verifyAuth } from './handlers/verify-auth.js';
import { handler as getMe } from './handlers/get-me.js';
import { handler as updateMe } from './handlers/update-me.js';
import { handler as createOrganisation } from './handlers/create-organisation.js';
import { handler as listOrganisations } from './handlers/list-organisations.js';
import { handler as getOrganisation } from './handlers/get-organisation.js';
import { handler as updateOrganisation } from './handlers/update-organisation.js';
import { handler as listOrganisationMembers } from './handlers/list-organisation-members.js';
import { handler as createInvitation } from './handlers/create-invitation.js';
import { handler as resendInvitation } from './handlers/resend-invitation.js';
import { handler as acceptInvitation } from './handlers/accept-invitation.js';
import { handler as listMyInvitations } from './handlers/list-my-invitations.js';
import { handler as updateOrganisationMember } from './handlers/update-organisation-member.js';
import { handler as removeOrganisationMember } from './handlers/remove-organisation-member.js';
import { handler as createWorkspace } from './handlers/create-workspace.js';
import { handler as listWorkspaces } from './handlers/list-workspaces.js';
import { handler as getWorkspace } from './handlers/get-workspace.js';
import { handler as updateWorkspace } from './handlers/update-workspace.js';
import { handler as deleteWorkspace } from './handlers/delete-workspace.js';
import { handler as listWorkspaceMembers } from './handlers/list-workspace-members.js';
import { handler as putWorkspaceMember } from './handlers/put-workspace-member.js';
import { handler as removeWorkspaceMember } from './handlers/remove-workspace-member.js';

/** The access domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(accessRoutes, {
  verifyAuth,
  getMe,
  updateMe,
  createOrganisation,
  listOrganisations,
  getOrganisation,
  updateOrganisation,
  listOrganisationMembers,
  createInvitation,
  resendInvitation,
  acceptInvitation,
  listMyInvitations,
  updateOrganisationMember,
  removeOrganisationMember,
  createWorkspace,
  listWorkspaces,
  getWorkspace,
  updateWorkspace,
  deleteWorkspace,
  listWorkspaceMembers,
  putWorkspaceMember,
  removeWorkspaceMember,
});
