import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';

/** The contacts' query keys and fetchers: one contact (its page and its SMS thread) and its notes. */
export const contactQueries = {
  detail: (workspace_id: string, contact_id: string) =>
    queryOptions({
      queryKey: ['contact', workspace_id, contact_id],
      queryFn: () =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/contacts/{contact_id}', {
            params: { path: { workspace_id, contact_id } },
          }),
        ),
    }),

  notes: (workspace_id: string, contact_id: string) =>
    pagedList(['contact-notes', workspace_id, contact_id], (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/contacts/{contact_id}/notes', {
          params: { path: { workspace_id, contact_id }, query: { cursor } },
        }),
      ),
    ),
};
