import { httpHandler } from '../../platform/http/index.js';
import { createOrganisation, getOrganisation } from '../organisations.js';
import { CreateOrganisationBody } from '../schemas.js';
import { requireUser } from '../workspace-access.js';
import { organisationView } from '../views.js';

/** `POST /api/v1/organisations`: the caller becomes the owner; a `Default` workspace; the Free plan. */
export const handler = httpHandler({ auth: 'user', body: CreateOrganisationBody }, async (req) => {
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
