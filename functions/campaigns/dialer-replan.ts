import { clock } from '../platform/clock.js';
import { BatchContactEntity, DUE_NOW, type BatchContact, type Campaign } from './entities.js';
import type { CallingWindow } from './model.js';
import { transact } from './service.js';
import { nextOpening, recipientZones } from './window.js';
import { readBatchContacts, readContacts } from './dialer-reads.js';
import { moveMany, type Move } from './dialer-transitions.js';

/** Waiting contacts re-planned per query page. */
const REPLAN_PAGE = 500;

/**
 * The calling window changed, or the campaign resumed (`replanAt` set by the PATCH): every waiting
 * contact the window deferred to a later time gets the time the window now gives it — from the time
 * it was due before the deferral (`deferredFrom`: now, or a retry's time), its next opening under the
 * new window in its zones, else that time itself (the new window is open: due as it was). Each move
 * is conditioned on the contact's state and attempt, as every move is; then `replanAt` is removed on
 * condition of the value read, so a PATCH made meanwhile is re-planned by the next pass. A pass that
 * crashes half-way leaves `replanAt`: the next pass does it again (a re-planned contact is planned
 * the same). The number of contacts whose time changed.
 */
export async function replanDeferred(campaign: Campaign, workspaceTimezone: string): Promise<number> {
  const { workspaceId, campaignId } = campaign;
  const window = campaign.callingWindow as CallingWindow;
  const now = clock.now();
  let replanned = 0;
  for (const state of ['pending', 'retry_scheduled'] as const) {
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: { data: BatchContact[]; cursor: string | null } = await BatchContactEntity.query
        .byState({ workspaceId, campaignId, state })
        .gt({ dueAt: now.toISOString() })
        .go({ cursor, count: REPLAN_PAGE });
      cursor = page.cursor;
      const fresh = (await readBatchContacts(page.data)).filter(
        (bc) => bc.state === state && bc.deferredFrom !== undefined,
      );
      const contacts = await readContacts(workspaceId, fresh);
      const moves = fresh.flatMap((bc): Move[] => {
        const from = bc.deferredFrom!;
        const earliest = from === DUE_NOW || Date.parse(from) < now.getTime() ? now : new Date(from);
        const zones = recipientZones({
          window,
          contactTimezone: bc.contactId ? contacts.get(bc.contactId)?.timezone : undefined,
          phone: bc.phone,
          workspaceTimezone,
        });
        const opening = nextOpening(window, zones, earliest);
        const dueAt = opening ? opening.toISOString() : from;
        if (dueAt === bc.dueAt) return [];
        return [
          {
            bc,
            to: bc.state,
            options: opening ? { set: { dueAt } } : { set: { dueAt }, remove: ['deferredFrom'] },
          },
        ];
      });
      replanned += await moveMany(campaign, moves);
    }
  }
  await transact((tx) => [
    tx.campaign
      .patch({ workspaceId, campaignId })
      .remove(['replanAt'])
      .where((attr, op) => op.eq(attr.replanAt, campaign.replanAt!))
      .commit(),
  ]);
  return replanned;
}
