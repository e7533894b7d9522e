import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as numbers from './schemas.js';

export const numberRoutes = {
  listPhoneNumbers: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers',
    summary: 'List phone numbers',
    description: "The workspace's phone numbers (viewer)",
    auth: 'user_or_api_key',
    scope: 'agents:read',
    query: pagination.ListQuery,
    response: numbers.PhoneNumberList,
    access: { table: 'readwrite' },
  }),
  buyPhoneNumber: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers',
    summary: 'Buy a phone number',
    description:
      'Buy a number: {country:"AU", area_code?} or {phone_number} (organisation owner/admin, active paid subscription)',
    auth: 'user_or_api_key',
    body: numbers.BuyNumberBody,
    response: numbers.PhoneNumberResponse,
    errors: {
      402: 'The organisation has no active subscription',
      409: 'The number asked for is not available, or in use',
    },
    access: { table: 'readwrite', secrets: ['telephony'] },
  }),
  updatePhoneNumber: defineRoute({
    method: 'PATCH',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}',
    summary: 'Update a phone number',
    description: 'Connect the number to an agent ({agent_id}) or disconnect it ({agent_id: null}) (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    body: numbers.UpdateNumberBody,
    response: numbers.PhoneNumberResponse,
    errors: { 409: 'The agent has another number, or the number is being changed by another request' },
    access: { table: 'readwrite' },
  }),
  releasePhoneNumber: defineRoute({
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}',
    summary: 'Release a phone number',
    description: 'Release a number at the provider (organisation owner/admin)',
    auth: 'user_or_api_key',
    successStatus: 204,
    errors: { 409: 'The number is being changed by another request' },
    access: { table: 'readwrite', secrets: ['telephony'] },
  }),
};
