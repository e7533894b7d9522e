import type { RepliesSource } from './replies.js';

/**
 * The replies the page shows: the SMS domain's replies to the post-call SMS that carried the code.
 * (A composition point: the recordings domain is handed this source.)
 */
export const repliesSource: RepliesSource = async () => [];
