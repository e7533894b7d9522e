import { api, type Json } from '../../helpers/http.js';
import {
  addMember,
  allPages,
  apiKey,
  contactPath,
  contactsPath,
  createContact,
  newTenant,
  notesPath,
  uniqueMobile,
  ws,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * Who may do what with contacts and notes: another workspace's contact or note is 404 on every route
 * (another organisation's workspace, or a second workspace of the same organisation); viewers read
 * and are 403 on every write; API keys need contacts:read / contacts:write, in their own workspace.
 */

let tenant: Tenant;
let other: Tenant;
let viewer: User;
let contact: Json;
let note: Json;

beforeAll(async () => {
  tenant = await newTenant();
  other = await newTenant();
  viewer = await addMember(tenant, 'viewer');
  contact = await createContact(tenant, {
    first_name: 'Private',
    phone: uniqueMobile(),
    email: 'p@example.com',
  });
  note = (
    await api('POST', notesPath(tenant, contact.id), { token: tenant.owner.token, body: { text: 'secret' } })
  ).body;
});

/** Every contact and note route, with a valid body for writes, as paths under a workspace prefix. */
const routes = (prefix: string, contactId: string, noteId: string) => {
  const c = `${prefix}/contacts/${contactId}`;
  return [
    { method: 'GET', path: c, write: false },
    { method: 'PATCH', path: c, body: { first_name: 'Changed' }, write: true },
    { method: 'DELETE', path: c, write: true },
    { method: 'GET', path: `${c}/notes`, write: false },
    { method: 'POST', path: `${c}/notes`, body: { text: 'intruder' }, write: true },
    { method: 'PATCH', path: `${c}/notes/${noteId}`, body: { text: 'changed' }, write: true },
    { method: 'DELETE', path: `${c}/notes/${noteId}`, write: true },
  ] as { method: string; path: string; body?: unknown; write: boolean }[];
};

async function unchanged() {
  expect((await api('GET', contactPath(tenant, contact.id), { token: tenant.owner.token })).body).toEqual(
    contact,
  );
  expect((await api('GET', notesPath(tenant, contact.id), { token: tenant.owner.token })).body.items).toEqual(
    [note],
  );
}

describe('tenant isolation', () => {
  it("another organisation's member is 404 on every route of this workspace", async () => {
    for (const route of [
      ...routes(ws(tenant), contact.id, note.id),
      { method: 'GET', path: contactsPath(tenant), write: false },
      { method: 'POST', path: contactsPath(tenant), body: { phone: uniqueMobile() }, write: true },
    ]) {
      const res = await api(route.method, route.path, { token: other.owner.token, body: route.body });
      expect({ ...route, status: res.status, body: res.body }).toEqual({
        ...route,
        status: 404,
        body: { error: 'Workspace not found' },
      });
    }
    await unchanged();
  });

  it("this workspace's contact and note through another workspace's path are 404 (its own owner there)", async () => {
    for (const route of routes(ws(other), contact.id, note.id)) {
      const res = await api(route.method, route.path, { token: other.owner.token, body: route.body });
      expect({ ...route, status: res.status }).toEqual({ ...route, status: 404 });
      expect(['Contact not found', 'Note not found']).toContain(res.body.error);
    }
    // Nor does it show in the other workspace's list or search.
    expect((await allPages(contactsPath(other), other.owner.token)).items).toEqual([]);
    expect((await allPages(contactsPath(other), other.owner.token, { q: 'private' })).items).toEqual([]);
    await unchanged();
  });

  it('a second workspace of the same organisation does not see the first one’s contacts', async () => {
    const second = await api('POST', `/api/v1/organisations/${tenant.organisationId}/workspaces`, {
      token: tenant.owner.token,
      body: { name: 'Second' },
    });
    expect(second.status).toBe(201);
    const prefix = `/api/v1/workspaces/${second.body.id}`;
    for (const route of routes(prefix, contact.id, note.id)) {
      const res = await api(route.method, route.path, { token: tenant.owner.token, body: route.body });
      expect({ ...route, status: res.status }).toEqual({ ...route, status: 404 });
    }
    // The same number is free there: phone and email are unique per workspace.
    const same = await api('POST', `${prefix}/contacts`, {
      token: tenant.owner.token,
      body: { phone: contact.phone, email: contact.email },
    });
    expect(same.status).toBe(201);
    expect(same.body.id).not.toBe(contact.id);
    await unchanged();
  });
});

describe('roles', () => {
  it('a viewer reads contacts and notes', async () => {
    expect((await api('GET', contactsPath(tenant), { token: viewer.token })).status).toBe(200);
    for (const route of routes(ws(tenant), contact.id, note.id).filter((r) => !r.write)) {
      expect((await api(route.method, route.path, { token: viewer.token })).status).toBe(200);
    }
  });

  it('a viewer is 403 on every write, and nothing changes', async () => {
    for (const route of [
      ...routes(ws(tenant), contact.id, note.id).filter((r) => r.write),
      { method: 'POST', path: contactsPath(tenant), body: { phone: uniqueMobile() }, write: true },
    ]) {
      const res = await api(route.method, route.path, { token: viewer.token, body: route.body });
      expect({ ...route, status: res.status, body: res.body }).toEqual({
        ...route,
        status: 403,
        body: { error: 'Viewers have read-only access' },
      });
    }
    await unchanged();
    expect((await allPages(contactsPath(tenant), tenant.owner.token)).items).toHaveLength(1);
  });

  it('workspace members and admins write', async () => {
    for (const role of ['member', 'admin'] as const) {
      const user = await addMember(tenant, role);
      const made = await createContact(tenant, { phone: uniqueMobile() }, user.token);
      const noted = await api('POST', notesPath(tenant, made.id), {
        token: user.token,
        body: { text: role },
      });
      expect(noted.body.author_id).toBe(user.userId);
      expect((await api('DELETE', contactPath(tenant, made.id), { token: user.token })).status).toBe(204);
    }
  });
});

describe('API keys', () => {
  it('contacts:read reads; its writes are 403 lacking contacts:write', async () => {
    const { key } = await apiKey(tenant, ['contacts:read']);
    expect((await api('GET', contactsPath(tenant), { token: key })).status).toBe(200);
    for (const route of routes(ws(tenant), contact.id, note.id)) {
      const res = await api(route.method, route.path, { token: key, body: route.body });
      if (route.write) {
        expect({ ...route, status: res.status, body: res.body }).toEqual({
          ...route,
          status: 403,
          body: { error: 'API key lacks required scope: contacts:write' },
        });
      } else {
        expect({ ...route, status: res.status }).toEqual({ ...route, status: 200 });
      }
    }
    await unchanged();
  });

  it('contacts:write writes (the key is the author) but does not read without contacts:read', async () => {
    const { key, keyId } = await apiKey(tenant, ['contacts:write']);
    const made = await createContact(tenant, { phone: uniqueMobile() }, key);
    const noted = await api('POST', notesPath(tenant, made.id), { token: key, body: { text: 'by key' } });
    expect(noted.status).toBe(201);
    expect(noted.body.author_id).toBe(keyId);
    const read = await api('GET', contactPath(tenant, made.id), { token: key });
    expect(read.status).toBe(403);
    expect(read.body).toEqual({ error: 'API key lacks required scope: contacts:read' });
    expect((await api('DELETE', contactPath(tenant, made.id), { token: key })).status).toBe(204);
  });

  it('a key without contacts scopes is 403; a key of another workspace is 403 here', async () => {
    const { key } = await apiKey(tenant, ['start_call', 'agents:read']);
    expect((await api('GET', contactsPath(tenant), { token: key })).status).toBe(403);
    expect(
      (await api('POST', contactsPath(tenant), { token: key, body: { phone: uniqueMobile() } })).status,
    ).toBe(403);
    const foreign = (await apiKey(other, ['contacts:read', 'contacts:write'])).key;
    for (const route of routes(ws(tenant), contact.id, note.id)) {
      const res = await api(route.method, route.path, { token: foreign, body: route.body });
      expect({ ...route, status: res.status, body: res.body }).toEqual({
        ...route,
        status: 403,
        body: { error: 'API key not authorized for this workspace' },
      });
    }
    // In its own workspace, this workspace's contact is 404.
    const res = await api('GET', `${ws(other)}/contacts/${contact.id}`, { token: foreign });
    expect(res.status).toBe(404);
    await unchanged();
  });
});
