import { getUser } from '../platform/auth/users.js';
import { OrgMemberEntity, WorkspaceMemberEntity } from './entities.js';

/**
 * The people who administer a workspace: organisation owner and admins, and the workspace's admins.
 * Who gets the post-call email summary by default, and who is told when a webhook endpoint is disabled.
 */
export async function workspaceAdminEmails(organisationId: string, workspaceId: string): Promise<string[]> {
  const [orgMembers, workspaceMembers] = await Promise.all([
    OrgMemberEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' }),
    WorkspaceMemberEntity.query.byWorkspace({ workspaceId }).go({ pages: 'all' }),
  ]);
  const emails = new Set<string>();
  for (const member of orgMembers.data) {
    if (member.status === 'accepted' && (member.role === 'owner' || member.role === 'admin'))
      emails.add(member.email);
  }
  const admins = workspaceMembers.data.filter((member) => member.role === 'admin');
  const users = await Promise.all(admins.map((member) => getUser(member.userId)));
  for (const user of users) if (user?.email) emails.add(user.email);
  return [...emails].sort();
}
