import { resourceQueries } from './resource';

/** The phone numbers' query keys and fetchers; ['phone-numbers', workspace] prefixes every list of them. */
export const phoneNumberQueries = resourceQueries(
  '/api/v1/workspaces/{workspace_id}/phone-numbers',
  'phone-numbers',
);
