import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { createOrganisation, getOrganisation } from '../organisations.js';
import { requireUser } from '../workspace-access.js';
import { organisationView } from '../views.js';

/** `POST /api/v1/organisations`: the caller becomes the owner; a `Default` workspace; the Free plan. */
export const handler = implement(accessRoutes.createOrganisation, async (req) => {
  const owner = requireUser(req.principal);
  const { organisationId, workspaceId } = await createOrganisation(owner, { name: req.body.name });
  const { organisation, role, account } = await getOrganisation({
    organisationId,
    organisationRole: 'owner',
  });
  return {
    status: 201,
    body: { ...organisationView(organisation, role, account), default_workspace_id: workspaceId },
  };
});
