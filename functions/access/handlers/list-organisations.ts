import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { listMyOrganisations } from '../organisations.js';
import { paginate } from '../../platform/pagination.js';
import { requireUser } from '../workspace-access.js';
import { organisationSummaryView } from '../views.js';

/** `GET /api/v1/organisations`: the organisations the caller belongs to. */
export const handler = implement(accessRoutes.listOrganisations, async (req) => {
  const organisations = await listMyOrganisations(requireUser(req.principal).userId);
  const page = paginate(organisations, (o) => o.organisation.organisationId, req.query);
  return {
    status: 200,
    body: {
      items: page.items.map((o) => organisationSummaryView(o.organisation, o.role)),
      next_cursor: page.nextCursor,
    },
  };
});
