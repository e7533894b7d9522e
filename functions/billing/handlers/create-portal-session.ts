import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { createPortalSession } from '../subscriptions.js';

/** `POST /api/v1/organisations/{organisation_id}/billing/portal-session`: the provider's customer portal (owner). */
export const handler = implement(billingRoutes.createPortalSession, async ({ principal, params, body }) => {
  const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:manage');
  const session = await createPortalSession(organisationId, { returnUrl: body?.return_url });
  return { status: 201, body: { url: session.url } };
});
