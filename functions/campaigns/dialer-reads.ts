import { CallEntity, type Call } from '../calling/entities.js';
import { ContactEntity, type Contact } from '../contacts/entities.js';
import { BatchContactEntity, DUE_NOW, type BatchContact, type Campaign } from './entities.js';
import { bcKey } from './dialer-transitions.js';
import { callKey } from '../calling/call-shards.js';

/**
 * The dialer's reads (dialer.ts): due contacts, batch contacts, calls and contacts read consistently
 * by key; the do-not-call rule.
 */

export async function dueContacts(campaign: Campaign, now: Date, limit: number): Promise<BatchContact[]> {
  const { workspaceId, campaignId } = campaign;
  const due = now.toISOString();
  const lists = await Promise.all(
    (['pending', 'retry_scheduled'] as const).map(async (state) => {
      const { data } = await BatchContactEntity.query
        .byState({ workspaceId, campaignId, state })
        .lte({ dueAt: due })
        .go({ count: limit });
      return data;
    }),
  );
  const candidates = lists
    .flat()
    .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0))
    .slice(0, limit);
  // The index may lag: claim from the records as they are.
  return (await readBatchContacts(candidates)).filter(
    (bc) =>
      (bc.state === 'pending' || bc.state === 'retry_scheduled') && (bc.dueAt === DUE_NOW || bc.dueAt <= due),
  );
}

export async function readBatchContacts(items: BatchContact[]): Promise<BatchContact[]> {
  if (items.length === 0) return [];
  const found = new Map<string, BatchContact>();
  let pending = items.map(bcKey);
  for (let attempt = 0; pending.length > 0 && attempt < 8; attempt += 1) {
    const { data, unprocessed } = await BatchContactEntity.get(pending).go({ consistent: true });
    for (const bc of data) found.set(bc.batchContactId, bc);
    pending = unprocessed as typeof pending;
  }
  return items.map((bc) => found.get(bc.batchContactId)).filter((bc): bc is BatchContact => bc !== undefined);
}

export async function readCalls(workspaceId: string, callIds: string[]): Promise<Map<string, Call>> {
  const calls = new Map<string, Call>();
  let pending = callIds.map((callId) => callKey(workspaceId, callId));
  for (let attempt = 0; pending.length > 0 && attempt < 8; attempt += 1) {
    const { data, unprocessed } = await CallEntity.get(pending).go({ consistent: true });
    for (const call of data) calls.set(call.callId, call);
    pending = unprocessed as typeof pending;
  }
  return calls;
}

export async function readContacts(workspaceId: string, bcs: BatchContact[]): Promise<Map<string, Contact>> {
  const ids = [...new Set(bcs.map((bc) => bc.contactId).filter((id): id is string => !!id))];
  const contacts = new Map<string, Contact>();
  let pending = ids.map((contactId) => ({ workspaceId, contactId }));
  for (let attempt = 0; pending.length > 0 && attempt < 8; attempt += 1) {
    const { data, unprocessed } = await ContactEntity.get(pending).go({ consistent: true });
    for (const contact of data) contacts.set(contact.contactId, contact as Contact);
    pending = unprocessed as typeof pending;
  }
  return contacts;
}

/** Why a contact may not be called now, or undefined. */
export function doNotCall(
  contact: Pick<Contact, 'contactability'> | undefined,
  suppressed: boolean,
): string | undefined {
  if (suppressed) return 'suppressed';
  if (contact?.contactability === 'Do Not Contact') return 'do_not_contact';
  if (contact?.contactability === 'Unsubscribed') return 'unsubscribed';
  return undefined;
}
