import { isE164 } from '../platform/phone.js';
import { getStoredItems } from '../platform/table.js';
import { startCallKeys } from './start-call-items.js';

/**
 * The workspace's contact with this number (its phone key: contacts/entities.ts ContactPhoneEntity,
 * read as a plain key because contacts sit above calling), or undefined. An inbound call is linked to
 * its caller's contact with it; start-call reads the same key in its one batched read.
 */
export async function contactIdByPhone(workspaceId: string, phone: string): Promise<string | undefined> {
  if (!isE164(phone)) return undefined;
  const [item] = await getStoredItems([startCallKeys.contactPhone(workspaceId, phone)]);
  const contactId = (item as { contactId?: unknown } | undefined)?.contactId;
  return typeof contactId === 'string' ? contactId : undefined;
}
