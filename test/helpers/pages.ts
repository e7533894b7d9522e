import { api, type Json } from './http.js';

/**
 * Every item of a paginated list route (`{ items, next_cursor }`, API.md's pagination), following
 * `next_cursor` until it is null. `query` is sent on every page (with `limit` 100 unless given);
 * a status other than 200 throws with the route's answer.
 */
export async function allPages(
  path: string,
  token: string,
  query: Record<string, string> = {},
): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ limit: '100', ...query, ...(cursor ? { cursor } : {}) });
    const res = await api('GET', `${path}?${params.toString()}`, { token });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    items.push(...(res.body.items as Json[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return items;
}
