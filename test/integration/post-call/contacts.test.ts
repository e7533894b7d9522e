import {
  ContactCallSummaryEntity,
  ContactEntity,
  ContactNoteEntity,
} from '../../../functions/contacts/entities.js';
import { findContactByEmail, findContactByPhone, getContact } from '../../../functions/contacts/lookup.js';
import {
  ensureContact,
  recordCallOnContact,
  setEmailIfFree,
  setNameIfMissing,
} from '../../../functions/contacts/post-call-changes.js';
import { mergeProfile } from '../../../functions/contacts/profiles.js';
import { newId } from '../../../functions/platform/ids.js';

/**
 * The contact entity against DynamoDB Local: found by phone or email, created when none matches,
 * never duplicated — also when many writers race.
 */

const workspace = () => newId('workspace');
const contactsOf = async (workspaceId: string) =>
  (await ContactEntity.query.byId({ workspaceId }).go({ pages: 'all' })).data;

describe('contacts', () => {
  it('concurrent finds-or-creates for one number make one contact', async () => {
    const workspaceId = workspace();
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        ensureContact(workspaceId, { phone: '+61 491 570 156', source: 'Call' }),
      ),
    );
    const ids = new Set(results.map((r) => r.contact.contactId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await contactsOf(workspaceId)).toHaveLength(1);
    expect((await findContactByPhone(workspaceId, '+61491570156'))?.contactId).toBe([...ids][0]);
  });

  it('a number matching an email-only contact joins that contact instead of making a second one', async () => {
    const workspaceId = workspace();
    const { contact: emailOnly } = await ensureContact(workspaceId, {
      email: 'Pat@Example.com',
      source: 'Manual',
    });
    expect(emailOnly.email).toBe('pat@example.com');
    expect(emailOnly.phone).toBeUndefined();
    const { contact, created } = await ensureContact(workspaceId, {
      phone: '+61491570157',
      email: 'pat@example.com',
      source: 'Call',
    });
    expect(created).toBe(false);
    expect(contact.contactId).toBe(emailOnly.contactId);
    expect(contact.phone).toBe('+61491570157');
    expect(await contactsOf(workspaceId)).toHaveLength(1);
  });

  it('never gives one email to two contacts, and never overwrites a known name or email', async () => {
    const workspaceId = workspace();
    const { contact: a } = await ensureContact(workspaceId, { phone: '+61491570158', source: 'Call' });
    const { contact: b } = await ensureContact(workspaceId, { phone: '+61491570159', source: 'Call' });
    const outcomes = await Promise.all([
      setEmailIfFree(workspaceId, a.contactId, 'same@example.com'),
      setEmailIfFree(workspaceId, b.contactId, 'same@example.com'),
    ]);
    expect(outcomes.sort()).toEqual(['set', 'taken']);
    const owner = await findContactByEmail(workspaceId, 'SAME@example.com');
    const other = owner!.contactId === a.contactId ? b : a;
    expect(
      (await contactsOf(workspaceId)).find((c) => c.contactId === other.contactId)?.email,
    ).toBeUndefined();
    expect(await setEmailIfFree(workspaceId, owner!.contactId, 'another@example.com')).toBe('unchanged');
    expect(await setEmailIfFree(workspaceId, other.contactId, 'not an email')).toBe('invalid');
    expect(await setNameIfMissing(workspaceId, a.contactId, 'Alex')).toBe(true);
    expect(await setNameIfMissing(workspaceId, a.contactId, 'Someone Else')).toBe(false);
  });

  it('counts each call once and keeps the latest call as the last one, whatever the order', async () => {
    const workspaceId = workspace();
    const { contact } = await ensureContact(workspaceId, { phone: '+61491570160', source: 'Call' });
    const later = {
      callId: newId('call'),
      at: '2026-11-22T02:00:00.000Z',
      sentiment: 'positive',
      summary: 'later',
    };
    const earlier = {
      callId: newId('call'),
      at: '2026-11-22T01:00:00.000Z',
      sentiment: 'negative',
      summary: 'earlier',
    };
    await recordCallOnContact(workspaceId, contact.contactId, later);
    await Promise.all([
      recordCallOnContact(workspaceId, contact.contactId, later),
      recordCallOnContact(workspaceId, contact.contactId, earlier),
    ]);
    const after = await findContactByPhone(workspaceId, '+61491570160', { withCalls: true });
    expect(after).toMatchObject({
      callCount: 2,
      lastCallId: later.callId,
      lastCallSentiment: 'positive',
      lastCallSummary: 'later',
      lastContactedAt: later.at,
    });
    // Kept in the contact's call summary: the contact item (and so its search entries) untouched.
    const stored = await getContact(workspaceId, contact.contactId);
    expect(stored).toMatchObject({ callCount: 0, version: contact.version });
    expect(stored?.lastCallId).toBeUndefined();
    const { data: summary } = await ContactCallSummaryEntity.get({
      workspaceId,
      contactId: contact.contactId,
    }).go();
    expect(summary).toMatchObject({ callCount: 2, lastCallId: later.callId, version: 2 });
  });

  it('counts calls racing on one contact exactly, the latest call last', async () => {
    const workspaceId = workspace();
    const { contact } = await ensureContact(workspaceId, { phone: '+61491570162', source: 'Call' });
    const calls = Array.from({ length: 8 }, (_, i) => ({
      callId: newId('call'),
      at: `2026-11-22T0${i}:00:00.000Z`,
      summary: `call ${i}`,
      note: `note ${i}`,
    }));
    const outcomes = await Promise.all(
      [...calls, ...calls].map((call) => recordCallOnContact(workspaceId, contact.contactId, call)),
    );
    expect(outcomes.filter((o) => o.counted)).toHaveLength(8);
    const after = await getContact(workspaceId, contact.contactId, { withCalls: true });
    expect(after).toMatchObject({
      callCount: 8,
      lastCallId: calls[7].callId,
      lastCallSummary: 'call 7',
      lastContactedAt: calls[7].at,
    });
    const notes = await ContactNoteEntity.query.byContact({ workspaceId, contactId: contact.contactId }).go();
    expect(notes.data.map((n) => n.text).sort()).toEqual(calls.map((c) => c.note).sort());
  });

  it('a contact with its calls on the contact item (written before summaries) continues its count', async () => {
    const workspaceId = workspace();
    const contactId = newId('contact');
    const earlier = newId('call');
    await ContactEntity.create({
      workspaceId,
      contactId,
      phone: '+61491570163',
      source: 'Call',
      contactability: 'Contactable',
      callCount: 3,
      lastCallId: earlier,
      lastCallAt: '2026-11-20T00:00:00.000Z',
      lastCallSentiment: 'positive',
      lastCallSummary: 'earlier',
      lastContactedAt: '2026-11-21T00:00:00.000Z',
      createdAt: '2026-09-01T00:00:00.000Z',
      version: 4,
    }).go();
    // Read as it is while it has no summary.
    expect(await getContact(workspaceId, contactId, { withCalls: true })).toMatchObject({
      callCount: 3,
      lastCallId: earlier,
      lastContactedAt: '2026-11-21T00:00:00.000Z',
    });
    // A call older than the contact's last one: counted, the last call kept.
    const older = { callId: newId('call'), at: '2026-11-19T00:00:00.000Z', sentiment: 'negative' };
    expect(await recordCallOnContact(workspaceId, contactId, older)).toEqual({ counted: true });
    expect(await getContact(workspaceId, contactId, { withCalls: true })).toMatchObject({
      callCount: 4,
      lastCallId: earlier,
      lastCallSentiment: 'positive',
      lastCallSummary: 'earlier',
      lastContactedAt: '2026-11-21T00:00:00.000Z',
    });
    const newer = { callId: newId('call'), at: '2026-11-22T00:00:00.000Z', summary: 'newer' };
    await recordCallOnContact(workspaceId, contactId, newer);
    expect(await getContact(workspaceId, contactId, { withCalls: true })).toMatchObject({
      callCount: 5,
      lastCallId: newer.callId,
      lastCallSentiment: 'positive',
      lastCallSummary: 'newer',
      lastContactedAt: newer.at,
    });
    expect(await getContact(workspaceId, contactId)).toMatchObject({ callCount: 3, version: 4 });
  });

  it('merges profile facts under concurrent writers without losing any', async () => {
    const workspaceId = workspace();
    const { contact } = await ensureContact(workspaceId, { phone: '+61491570161', source: 'Call' });
    await Promise.all([
      mergeProfile(workspaceId, contact.contactId, { intents: ['buy'], budget: 900_000 }),
      mergeProfile(workspaceId, contact.contactId, {
        intents: ['rent'],
        listings_of_interest: [{ listing_id: 'l1' }],
      }),
    ]);
    const after = await findContactByPhone(workspaceId, '+61491570161');
    expect((after?.profile as { intents: string[] }).intents.sort()).toEqual(['buy', 'rent']);
    expect(after?.profile).toMatchObject({ budget: 900_000, listings_of_interest: [{ listing_id: 'l1' }] });
  });
});
