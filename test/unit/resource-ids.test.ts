/**
 * docs/conventions.md: every resource response carries `id`, its own id. Checked over the OpenAPI
 * document (the routes' own response schemas): the success body of every route, and the items of every
 * list, has an `id` property, unless the route is named below with the reason it is not a resource.
 */
import { describe, expect, it } from '@jest/globals';
import { apiRoutes } from '../../functions/api-routes.js';
import { buildOpenApiDocument } from '../../functions/platform/openapi.js';

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[] };

/** Routes whose success body is not a resource (or its list), by operationId, with the reason. */
const NOT_RESOURCES: Record<string, string> = {
  health: 'the service status',
  openApi: 'the API description',
  verifyAuth: 'who the credential is, not a resource',
  listOrganisationMembers: 'memberships, named by the member’s user_id (pending ones by invitation_id)',
  updateOrganisationMember: 'a membership, named by the member’s user_id',
  listWorkspaceMembers: 'memberships, named by the member’s user_id',
  putWorkspaceMember: 'a membership, named by the member’s user_id',
  getBilling: 'the organisation’s billing account, one per organisation (organisation_id names it)',
  startSubscription: 'the organisation’s subscription, one per organisation (organisation_id names it)',
  cancelSubscription: 'the organisation’s subscription, one per organisation (organisation_id names it)',
  createPortalSession: 'a one-time link to the payment provider’s portal',
  pricingModel: 'the public price list',
  getWebhookSecret: 'the workspace’s signing secret, one per workspace',
  rotateWebhookSecret: 'the workspace’s signing secret, one per workspace',
  listSuppressionList: 'numbers of the organisation’s do-not-call list, each named by its phone (E.164)',
  putSuppressionEntry: 'a number of the organisation’s do-not-call list, named by its phone (E.164)',
  callAnalytics: 'counts of calls over a range of days, computed, not a resource',
  listAgentToolTools: 'the tools an MCP server offers now, named by their names, asked each time',
  testAgentTool: 'the outcome of one run of a tool, not stored',
  listAgentVersions: 'an agent’s versions, each named by its agent_id and version number',
  getAgentVersion: 'an agent’s version, named by its agent_id and version number (its agent has id)',
  createTestChatTicket: 'a one-time ticket for the relay, shown once and stored only as its hash',
  createWebCall:
    'how the browser joins the call it created (the call is `call_id`): a one-time ticket or token',
};

/** Envelopes around a resource: the property that holds it. */
const ENVELOPES: Record<string, string> = {
  testPostCallAction: 'delivery',
};

const document = buildOpenApiDocument(apiRoutes);

interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

const operations: Operation[] = Object.values(document.paths).flatMap(
  (byMethod) => Object.values(byMethod) as Operation[],
);

function successSchema(operation: Operation): Schema | undefined {
  const status = Object.keys(operation.responses).find((s) => /^2\d\d$/.test(s));
  return status ? operation.responses[status].content?.['application/json']?.schema : undefined;
}

const isPage = (schema: Schema) =>
  schema.properties !== undefined &&
  Object.keys(schema.properties).sort().join() === 'items,next_cursor' &&
  schema.properties.items.type === 'array';

describe('every resource response carries `id`', () => {
  const described = operations.flatMap((operation) => {
    const schema = successSchema(operation);
    return schema ? [{ operationId: operation.operationId, schema }] : [];
  });

  it('looks at every route with a JSON success body', () => {
    expect(described.length).toBeGreaterThan(30);
  });

  it.each(described.filter((d) => !(d.operationId in NOT_RESOURCES)))(
    '$operationId: the resource (or each item of the list) has a required `id`',
    ({ operationId, schema }) => {
      let resource = schema;
      if (operationId in ENVELOPES) resource = schema.properties?.[ENVELOPES[operationId]] ?? {};
      if (isPage(schema)) resource = schema.properties?.items.items ?? {};
      expect({ operationId, properties: Object.keys(resource.properties ?? {}) }).toEqual({
        operationId,
        properties: expect.arrayContaining(['id']),
      });
      expect(resource.properties?.id).toMatchObject({ type: 'string' });
      expect(resource.required ?? []).toContain('id');
    },
  );

  it('the exceptions name routes that exist', () => {
    const ids = new Set(operations.map((o) => o.operationId));
    const stale = [...Object.keys(NOT_RESOURCES), ...Object.keys(ENVELOPES)].filter((name) => !ids.has(name));
    expect(stale).toEqual([]);
  });
});
