import { ContactNoteEntity } from '../../../functions/contacts/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { connectNumber, createAgent, startCall, TO } from '../post-call/fixtures.js';
import {
  addMember,
  allPages,
  contactPath,
  contactsPath,
  createContact,
  issues,
  newTenant,
  notesPath,
  uniqueMobile,
  UNKNOWN_NOTE,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * A contact's notes: create (1–500 characters, a channel, `direct` by default), list newest first,
 * change, delete; deleted with their contact. The post-call pipeline's contact update writes a
 * `post_call` note on the caller's contact, once per call.
 */

let tenant: Tenant;
let member: User;
let contact: Json;

beforeAll(async () => {
  tenant = await newTenant();
  member = await addMember(tenant, 'member');
  contact = await createContact(tenant, { first_name: 'Noted', phone: uniqueMobile() });
});

describe('notes', () => {
  it('create, list newest first, change, delete', async () => {
    const first = await api('POST', notesPath(tenant, contact.id), {
      token: member.token,
      body: { text: '  Called back, wants a viewing on Saturday.  ' },
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^note_[0-9A-HJKMNP-TV-Z]{26}$/),
      text: 'Called back, wants a viewing on Saturday.',
      channel: 'direct',
      channel_label: 'Direct',
      author_id: member.userId,
      call_id: null,
      created_at: expect.any(String),
      updated_at: first.body.created_at,
    });
    const second = await api('POST', notesPath(tenant, contact.id), {
      token: tenant.owner.token,
      body: { text: 'x'.repeat(500), channel: 'inbound_call' },
    });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ channel: 'inbound_call', channel_label: 'Inbound call' });

    const listed = await api('GET', notesPath(tenant, contact.id), { token: member.token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [second.body, first.body], next_cursor: null });

    const patched = await api('PATCH', `${notesPath(tenant, contact.id)}/${first.body.id}`, {
      token: member.token,
      body: { text: 'Viewing booked.', channel: 'outbound_call' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...first.body,
      text: 'Viewing booked.',
      channel: 'outbound_call',
      channel_label: 'Outbound call',
      updated_at: expect.any(String),
    });

    const deleted = await api('DELETE', `${notesPath(tenant, contact.id)}/${second.body.id}`, {
      token: member.token,
    });
    expect(deleted.status).toBe(204);
    const again = await api('DELETE', `${notesPath(tenant, contact.id)}/${second.body.id}`, {
      token: member.token,
    });
    expect(again.status).toBe(404);
    expect((await api('GET', notesPath(tenant, contact.id), { token: member.token })).body.items).toEqual([
      patched.body,
    ]);
  });

  it.each([
    ['channel campaign', 'campaign', 'Campaign'],
    ['channel post_call', 'post_call', 'Post-call'],
  ])('%s is labelled', async (_label, channel, label) => {
    const res = await api('POST', notesPath(tenant, contact.id), {
      token: member.token,
      body: { text: 'a note', channel },
    });
    expect(res.body).toMatchObject({ channel, channel_label: label });
  });

  it.each([
    ['empty text', { text: '' }, 'body.text:string_too_short'],
    ['only spaces', { text: '   ' }, 'body.text:string_too_short'],
    ['501 characters', { text: 'x'.repeat(501) }, 'body.text:string_too_long'],
    ['no text', {}, 'body.text:missing'],
    ['a bad channel', { text: 'hi', channel: 'fax' }, 'body.channel:enum'],
    ['an unknown field', { text: 'hi', author_id: 'usr_x' }, 'body.author_id:extra_forbidden'],
  ])('a note with %s is 422 and writes nothing', async (_label, body, issue) => {
    const own = await createContact(tenant, { phone: uniqueMobile() });
    const res = await api('POST', notesPath(tenant, own.id), { token: member.token, body });
    expect(res.status).toBe(422);
    expect(issues(res)).toContain(issue);
    expect((await api('GET', notesPath(tenant, own.id), { token: member.token })).body.items).toEqual([]);
  });

  it('a bad PATCH is 422 and changes nothing', async () => {
    const note = (
      await api('POST', notesPath(tenant, contact.id), { token: member.token, body: { text: 'keep me' } })
    ).body;
    for (const body of [{ text: '' }, { text: 'y'.repeat(501) }, { channel: 'sms' }, { pinned: true }]) {
      const res = await api('PATCH', `${notesPath(tenant, contact.id)}/${note.id}`, {
        token: member.token,
        body,
      });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    const { items } = await allPages(notesPath(tenant, contact.id), member.token);
    expect(items.find((n: Json) => n.id === note.id)).toEqual(note);
  });

  it('notes of an unknown contact, unknown notes and notes of another contact are 404', async () => {
    const other = await createContact(tenant, { phone: uniqueMobile() });
    const note = (
      await api('POST', notesPath(tenant, contact.id), { token: member.token, body: { text: 'mine' } })
    ).body;
    const unknownContact = 'ct_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    expect(
      (await api('POST', notesPath(tenant, unknownContact), { token: member.token, body: { text: 'x' } }))
        .body,
    ).toEqual({ error: 'Contact not found' });
    expect((await api('GET', notesPath(tenant, unknownContact), { token: member.token })).status).toBe(404);
    expect((await api('GET', notesPath(tenant, 'garbage'), { token: member.token })).status).toBe(404);
    for (const path of [
      `${notesPath(tenant, contact.id)}/${UNKNOWN_NOTE}`,
      `${notesPath(tenant, contact.id)}/garbage`,
      `${notesPath(tenant, other.id)}/${note.id}`,
    ]) {
      const patched = await api('PATCH', path, { token: member.token, body: { text: 'x' } });
      expect({ path, status: patched.status, body: patched.body }).toEqual({
        path,
        status: 404,
        body: { error: 'Note not found' },
      });
      expect((await api('DELETE', path, { token: member.token })).status).toBe(404);
    }
  });

  it('pages newest first', async () => {
    const own = await createContact(tenant, { phone: uniqueMobile() });
    const made: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const res = await api('POST', notesPath(tenant, own.id), {
        token: member.token,
        body: { text: `n${i}` },
      });
      made.push(res.body.id);
    }
    const { items, pages } = await allPages(notesPath(tenant, own.id), member.token, { limit: '5' });
    expect(pages.map((p) => p.body.items.length)).toEqual([5, 5, 2]);
    expect(items.map((n: Json) => n.id)).toEqual([...made].reverse());
  });

  it('deleting a contact deletes its notes', async () => {
    const own = await createContact(tenant, { phone: uniqueMobile() });
    for (const text of ['one', 'two', 'three']) {
      await api('POST', notesPath(tenant, own.id), { token: member.token, body: { text } });
    }
    expect((await api('DELETE', contactPath(tenant, own.id), { token: member.token })).status).toBe(204);
    const { data } = await ContactNoteEntity.query
      .byContact({ workspaceId: tenant.workspaceId, contactId: own.id })
      .go({ consistent: true });
    expect(data).toEqual([]);
    expect((await api('GET', notesPath(tenant, own.id), { token: member.token })).status).toBe(404);
  });
});

describe('the post-call note', () => {
  it('a call with contact_update leaves one post_call note on the caller’s contact, written by the system', async () => {
    const paid = await newTenant({ paid: true });
    const agent = await createAgent(paid, [{ type: 'contact_update', config: {} }], {});
    await connectNumber(paid, agent.id);
    // The person called is already a contact (typed in national form).
    const known = await createContact(paid, { first_name: 'Jordan', phone: `0${TO.answered.slice(3)}` });
    const callId = await startCall(paid, agent.id, TO.answered, { name: 'Jordan Lee' });
    const notes = await waitFor(
      async () => {
        const res = await api('GET', notesPath(paid, known.id), { token: paid.owner.token });
        return res.body.items.length > 0 ? (res.body.items as Json[]) : undefined;
      },
      { what: 'the post-call note' },
    );
    await waitForQuiescence();
    const after = (await api('GET', notesPath(paid, known.id), { token: paid.owner.token })).body.items;
    expect(after).toHaveLength(1);
    expect(after[0]).toEqual(notes[0]);
    expect(after[0]).toMatchObject({
      channel: 'post_call',
      channel_label: 'Post-call',
      author_id: 'system',
      call_id: callId,
      text: expect.stringMatching(/^Outbound call \(completed\): .+/),
    });
    expect(after[0].text.length).toBeLessThanOrEqual(500);
    // The call is the contact's last contact; it is still one contact (found by its number).
    const contact = (await api('GET', contactPath(paid, known.id), { token: paid.owner.token })).body;
    expect(contact.last_contacted_at).toEqual(expect.any(String));
    expect(contact.first_name).toBe('Jordan'); // a name typed by a person is kept
    const all = await api('GET', contactsPath(paid), { token: paid.owner.token });
    expect(all.body.items.map((c: Json) => c.id)).toEqual([known.id]);
  });
});
