import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as numbers from './schemas.js';

export const numberRoutes = {
  listPhoneNumbers: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers',
    summary: "The workspace's phone numbers (viewer)",
    auth: 'user_or_api_key',
    scope: 'agents:read',
    query: pagination.ListQuery,
    response: numbers.PhoneNumberList,
    access: { table: 'readwrite' },
  }),
  buyPhoneNumber: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers',
    summary:
      'Buy a number: {country:"AU", area_code?} or {phone_number} (organisation owner/admin, active paid subscription)',
    auth: 'user_or_api_key',
    body: numbers.BuyNumberBody,
    response: numbers.PhoneNumberResponse,
    access: { table: 'readwrite', secrets: ['telephony'] },
  }),
  updatePhoneNumber: defineRoute({
    method: 'PATCH',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}',
    summary: 'Connect the number to an agent ({agent_id}) or disconnect it ({agent_id: null}) (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    body: numbers.UpdateNumberBody,
    response: numbers.PhoneNumberResponse,
    access: { table: 'readwrite' },
  }),
  releasePhoneNumber: defineRoute({
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}',
    summary: 'Release a number at the provider (organisation owner/admin)',
    auth: 'user_or_api_key',
    successStatus: 204,
    access: { table: 'readwrite', secrets: ['telephony'] },
  }),
};
