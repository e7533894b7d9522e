import type { Reply } from './schemas.js';

/**
 * Where the page's replies come from: the SMS domain's replies to the outbound post-call SMS that
 * carried the short code. Handed in by the handlers (composition points), so this domain does not
 * depend on how SMS are stored.
 */
export type RepliesSource = (shortCode: string) => Promise<Reply[]>;

/** Replies oldest first, each as the API shows it. */
export async function repliesFor(source: RepliesSource, shortCode: string): Promise<Reply[]> {
  const replies = await source(shortCode);
  return replies
    .map((reply) => ({ body: reply.body, received_at: reply.received_at }))
    .sort((a, b) => a.received_at.localeCompare(b.received_at));
}
