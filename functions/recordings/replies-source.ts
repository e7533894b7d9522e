import { listRepliesForShortCode } from '../sms/inbound.js';
import type { RepliesSource } from './replies.js';

/**
 * The replies the page shows: the SMS domain's replies to the outbound post-call SMS that carried the
 * code (functions/sms: an inbound SMS answering the latest message sent to that phone, when that
 * message carried a short code; opt-out keywords are not replies).
 */
export const repliesSource: RepliesSource = (shortCode) => listRepliesForShortCode(shortCode);
