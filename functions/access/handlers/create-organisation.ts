import { implement } from '../../platform/http/index.js';
import { createOrganisation, organisationBilling } from '../../billing/organisations.js';
import { accessRoutes } from '../routes.js';
import { getOrganisation } from '../organisations.js';
import { requireUser } from '../workspace-access.js';
import { organisationView } from '../views.js';

/**
 * `POST /api/v1/organisations`: the caller becomes the owner; a `Default` workspace; the Free plan.
 * The organisation is opened by billing (one transaction with its billing account).
 */
export const handler = implement(accessRoutes.createOrganisation, async (req) => {
  const owner = requireUser(req.principal);
  const { organisationId, workspaceId } = await createOrganisation(owner, { name: req.body.name });
  const [{ organisation, role }, billing] = await Promise.all([
    getOrganisation({ organisationId, organisationRole: 'owner' }),
    organisationBilling(organisationId),
  ]);
  return {
    status: 201,
    body: { ...organisationView(organisation, role, billing), default_workspace_id: workspaceId },
  };
});
