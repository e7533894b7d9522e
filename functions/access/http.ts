import { domainHandler } from '../platform/http/index.js';
import { accessRoutes } from './routes.js';

/** The access domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(accessRoutes, {
  verifyAuth: () => import('./handlers/verify-auth.js'),
  getMe: () => import('./handlers/get-me.js'),
  updateMe: () => import('./handlers/update-me.js'),
  createOrganisation: () => import('./handlers/create-organisation.js'),
  listOrganisations: () => import('./handlers/list-organisations.js'),
  getOrganisation: () => import('./handlers/get-organisation.js'),
  updateOrganisation: () => import('./handlers/update-organisation.js'),
  listOrganisationMembers: () => import('./handlers/list-organisation-members.js'),
  createInvitation: () => import('./handlers/create-invitation.js'),
  resendInvitation: () => import('./handlers/resend-invitation.js'),
  acceptInvitation: () => import('./handlers/accept-invitation.js'),
  invitationPage: () => import('./handlers/invitation-page.js'),
  listMyInvitations: () => import('./handlers/list-my-invitations.js'),
  updateOrganisationMember: () => import('./handlers/update-organisation-member.js'),
  removeOrganisationMember: () => import('./handlers/remove-organisation-member.js'),
  createWorkspace: () => import('./handlers/create-workspace.js'),
  listWorkspaces: () => import('./handlers/list-workspaces.js'),
  getWorkspace: () => import('./handlers/get-workspace.js'),
  updateWorkspace: () => import('./handlers/update-workspace.js'),
  deleteWorkspace: () => import('./handlers/delete-workspace.js'),
  listWorkspaceMembers: () => import('./handlers/list-workspace-members.js'),
  putWorkspaceMember: () => import('./handlers/put-workspace-member.js'),
  removeWorkspaceMember: () => import('./handlers/remove-workspace-member.js'),
});
