import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as apiKeys from './api-key-schemas.js';

export const developerRoutes = {
  createApiKey: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/api-keys',
    summary: 'Create an API key',
    description: 'Create an API key; the whole key is in this response only (members, plan permitting)',
    auth: 'user',
    body: apiKeys.CreateApiKeyBody,
    response: apiKeys.ApiKeyWithSecretResponse,
    access: { table: 'readwrite' },
  }),
  listApiKeys: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/api-keys',
    summary: 'List API keys',
    description: "The workspace's API keys, never their secrets (members)",
    auth: 'user',
    query: pagination.ListQuery,
    response: apiKeys.ApiKeyList,
    access: { table: 'readwrite' },
  }),
  revokeApiKey: defineRoute({
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace_id}/api-keys/{key_id}',
    summary: 'Revoke an API key',
    description: 'Revoke an API key: 401 from now on (members)',
    auth: 'user',
    successStatus: 204,
    access: { table: 'readwrite' },
  }),
  rotateApiKey: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/api-keys/{key_id}/rotate',
    summary: 'Rotate an API key',
    description: 'A new secret for an API key, shown once; the old one stops working (members)',
    auth: 'user',
    response: apiKeys.ApiKeyWithSecretResponse,
    access: { table: 'readwrite' },
  }),
};
