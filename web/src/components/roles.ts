/** The names of roles, one spelling wherever the dashboard shows them (the header, the Team page). */
export const ORGANISATION_ROLE_LABELS = { owner: 'Owner', admin: 'Admin', regular: 'Regular' } as const;
export const WORKSPACE_ROLE_LABELS = { admin: 'Admin', member: 'Member', viewer: 'Viewer' } as const;

export type OrganisationRole = keyof typeof ORGANISATION_ROLE_LABELS;
export type WorkspaceRole = keyof typeof WORKSPACE_ROLE_LABELS;

/** "Owner (organisation) · Admin (workspace)": the signed-in user's roles, as the header and Team say them. */
export function rolesText(
  organisationRole: OrganisationRole,
  workspaceRole: WorkspaceRole | null | undefined,
) {
  const org = `${ORGANISATION_ROLE_LABELS[organisationRole]} (organisation)`;
  return workspaceRole ? `${org} · ${WORKSPACE_ROLE_LABELS[workspaceRole]} (workspace)` : org;
}
