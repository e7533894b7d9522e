import type { QueryKey } from '@tanstack/preact-query';

/** One page of a list the API pages with `next_cursor`. */
export interface Page<T> {
  items: T[];
  next_cursor?: string | null;
}

/** A paged list's key and page fetcher, as PagedTable and ListPage take them (spread into their props). */
export interface PagedList<T> {
  queryKey: QueryKey;
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>;
}

export const pagedList = <T>(
  queryKey: QueryKey,
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): PagedList<T> => ({ queryKey, fetchPage });
