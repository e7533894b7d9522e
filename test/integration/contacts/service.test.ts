import {
  ContactEntity,
  ContactPhoneEntity,
  ContactSearchEntity,
} from '../../../functions/contacts/entities.js';
import { updateContact } from '../../../functions/contacts/changes.js';
import { createContact, mergeContact } from '../../../functions/contacts/creation.js';
import { validateContactInput } from '../../../functions/contacts/input.js';
import { FILTERED_PAGE_READ, listContacts, reindexContacts } from '../../../functions/contacts/list.js';
import { DuplicateContactError, getContact } from '../../../functions/contacts/lookup.js';
import { contactView } from '../../../functions/contacts/views.js';
import { ContactListQuery } from '../../../functions/contacts/schemas.js';
import { newId } from '../../../functions/platform/ids.js';

/**
 * The contacts service against DynamoDB Local, as the imports to come will use it: create, merge
 * (fill only empty fields), validate without writing; contacts written before this version (no
 * first/last name, no search entries, no version) read and change as the others; a filtered page
 * may be short, never the end of the list while more match.
 */

const AU = { country: 'AU' };
const workspace = () => newId('workspace');
const query = (q: Record<string, string> = {}) => ContactListQuery.parse(q);

describe('createContact and mergeContact (for imports)', () => {
  it('createContact throws DuplicateContactError (409 with the id) when the number is taken', async () => {
    const workspaceId = workspace();
    const first = await createContact(workspaceId, { phone: '0491 570 156', source: 'csv' }, AU);
    const error = await createContact(workspaceId, { phone: '+61491570156' }, AU).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateContactError);
    expect(error).toMatchObject({ status: 409, contactId: first.contactId, field: 'phone' });
  });

  it('mergeContact creates when nothing matches, then fills only empty fields and never overwrites', async () => {
    const workspaceId = workspace();
    const created = await mergeContact(
      workspaceId,
      { phone: '0491 570 157', first_name: 'Ari', tags: ['Open home'], contactability: 'unsubscribed' },
      AU,
    );
    expect(created.outcome).toBe('created');
    const merged = await mergeContact(
      workspaceId,
      {
        phone: '+61 491 570 157',
        first_name: 'Someone',
        last_name: 'Else',
        email: 'ari@example.com',
        tags: ['open HOME', 'Investor'],
        attributes: { suburb: 'Manly' },
        timezone: 'Australia/Sydney',
        contactability: 'contactable',
        source: 'vcf',
      },
      AU,
    );
    expect(merged.outcome).toBe('merged');
    expect(merged.skipped).toEqual([]);
    expect(merged.contact.contactId).toBe(created.contact.contactId);
    expect(contactView(merged.contact)).toMatchObject({
      first_name: 'Ari', // a name is there: neither part is replaced
      last_name: '',
      email: 'ari@example.com',
      tags: ['Open home', 'Investor'],
      attributes: { suburb: 'Manly' },
      timezone: 'Australia/Sydney',
      contactability: 'unsubscribed',
      source: 'manual',
    });
    // Matched by email alone; an attribute it has keeps its value.
    const byEmail = await mergeContact(
      workspaceId,
      { email: 'ARI@example.com', attributes: { suburb: 'Bondi' } },
      AU,
    );
    expect(byEmail).toMatchObject({ outcome: 'merged', contact: { contactId: created.contact.contactId } });
    expect(contactView(byEmail.contact).attributes).toEqual({ suburb: 'Manly' });
  });

  it('mergeContact leaves a phone or email another contact has, and says so', async () => {
    const workspaceId = workspace();
    const a = await createContact(workspaceId, { email: 'a@example.com' }, AU);
    const b = await createContact(workspaceId, { phone: '+61491570158' }, AU);
    const merged = await mergeContact(workspaceId, { email: 'a@example.com', phone: '+61491570158' }, AU);
    // Matched by phone (b); the email belongs to a.
    expect(merged).toMatchObject({
      outcome: 'merged',
      skipped: ['email'],
      contact: { contactId: b.contactId },
    });
    expect(merged.contact.email).toBeUndefined();
    expect((await getContact(workspaceId, a.contactId))?.email).toBe('a@example.com');
  });

  it('concurrent merges of one new number make one contact', async () => {
    const workspaceId = workspace();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        mergeContact(workspaceId, { phone: '+61491570159', tags: [`t${i}`] }, AU),
      ),
    );
    expect(new Set(results.map((r) => r.contact.contactId)).size).toBe(1);
    expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
    const contact = await getContact(workspaceId, results[0].contact.contactId);
    expect([...(contact?.tags ?? [])].sort()).toEqual(Array.from({ length: 8 }, (_, i) => `t${i}`).sort());
  });

  it('validateContactInput checks a row without writing', async () => {
    expect(validateContactInput({ phone: '0491 570 160' }, 'AU')).toEqual({ ok: true });
    const bad = validateContactInput({ phone: '12345', email: 'nope' }, 'AU');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.issues.map((i) => i.loc.join('.')).sort()).toEqual(['body.email']);
    const badPhone = validateContactInput({ phone: '12345' }, 'AU');
    if (!badPhone.ok) expect(badPhone.issues.map((i) => i.loc.join('.'))).toEqual(['body.phone']);
    expect(badPhone.ok).toBe(false);
    expect(validateContactInput({}, 'AU').ok).toBe(false);
  });
});

describe('contacts written before this version', () => {
  it('read with their full name split, their source and last call; reindexContacts makes them searchable', async () => {
    const workspaceId = workspace();
    const contactId = newId('contact');
    // As the post-call pipeline wrote them before: a full name, no version, no search entries.
    await ContactEntity.create({
      workspaceId,
      contactId,
      name: 'Legacy Person Esq',
      phone: '+61491570161',
      source: 'Call',
      contactability: 'Contactable',
      callCount: 2,
      lastCallAt: '2026-10-01T00:00:00.000Z',
      createdAt: '2026-09-01T00:00:00.000Z',
      updatedAt: '2026-10-01T00:00:00.000Z',
    }).go();
    await ContactPhoneEntity.create({ workspaceId, phone: '+61491570161', contactId }).go();
    const legacy = await getContact(workspaceId, contactId);
    expect(contactView(legacy!)).toEqual({
      id: contactId,
      first_name: 'Legacy',
      last_name: 'Person Esq',
      phone: '+61491570161',
      email: null,
      contactability: 'contactable',
      source: 'call',
      source_label: 'Call',
      tags: [],
      attributes: {},
      timezone: null,
      last_contacted_at: '2026-10-01T00:00:00.000Z',
      created_at: '2026-09-01T00:00:00.000Z',
      updated_at: '2026-10-01T00:00:00.000Z',
    });
    expect((await listContacts(workspaceId, query())).items.map((c) => c.contactId)).toEqual([contactId]);
    expect((await listContacts(workspaceId, query({ source: 'call' }))).items).toHaveLength(1);
    expect((await listContacts(workspaceId, query({ q: 'legacy' }))).items).toEqual([]);

    expect(await reindexContacts(workspaceId)).toBe(1);
    expect(await reindexContacts(workspaceId)).toBe(1); // safe to run again
    const found = await listContacts(workspaceId, query({ q: 'legacy' }));
    expect(found.items.map((c) => contactView(c))).toEqual([
      contactView((await getContact(workspaceId, contactId))!),
    ]);
    expect((await listContacts(workspaceId, query({ q: 'person e' }))).items).toHaveLength(1);
  });

  it('change as the others (a PATCH of a versionless contact)', async () => {
    const workspaceId = workspace();
    const contactId = newId('contact');
    await ContactEntity.create({
      workspaceId,
      contactId,
      name: 'Old Timer',
      email: 'old@example.com',
      source: 'Manual',
      contactability: 'Do Not Contact',
      callCount: 0,
      createdAt: '2026-09-01T00:00:00.000Z',
    }).go();
    const updated = await updateContact(workspaceId, contactId, { last_name: 'Timer-Smith' }, AU);
    expect(contactView(updated)).toMatchObject({
      first_name: 'Old',
      last_name: 'Timer-Smith',
      contactability: 'do_not_contact',
      email: 'old@example.com',
    });
    expect(updated.name).toBe('Old Timer-Smith');
    expect(updated.version).toBe(1);
    const entries = await ContactSearchEntity.query.byToken({ workspaceId }).go();
    expect(entries.data.map((e) => e.token).sort()).toEqual([
      'old timer-smith',
      'old@example.com',
      'timer-smith',
    ]);
  });
});

describe('filtered pages', () => {
  it(`a page reads at most ${FILTERED_PAGE_READ} entries: a short or empty page still has a next_cursor, and the list goes on`, async () => {
    const workspaceId = workspace();
    const rare = await createContact(workspaceId, { phone: '+61491573000', tags: ['rare'] }, AU);
    const count = FILTERED_PAGE_READ + 10;
    for (let start = 0; start < count; start += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, count - start) }, (_, k) =>
          createContact(workspaceId, { phone: `+61491574${String(start + k).padStart(3, '0')}` }, AU),
        ),
      );
    }
    // Newest first: the rare contact (the oldest) is beyond the first page's reads.
    const first = await listContacts(workspaceId, query({ tag: 'rare' }));
    expect(first.items).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    const second = await listContacts(workspaceId, query({ tag: 'rare', cursor: first.nextCursor! }));
    expect(second.items.map((c) => c.contactId)).toEqual([rare.contactId]);
    expect(second.nextCursor).toBeNull();
    // Unfiltered, the same list is full pages of 50.
    const plain = await listContacts(workspaceId, query());
    expect(plain.items).toHaveLength(50);
  });
});
