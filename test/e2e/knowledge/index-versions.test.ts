import { KnowledgeBaseEntity } from '../../../functions/knowledge/entities.js';
import { forgetLoadedIndexes, searchBase } from '../../../functions/knowledge/search-index.js';
import { objectExists } from '../../../functions/platform/storage.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import { newTenant, ws, type Tenant } from '../calling/fixtures.js';

/**
 * A knowledge base's search index is one object per version in the bucket: once a newer one is
 * recorded on the base, the one it replaced is deleted; a container that loaded the old one keeps
 * answering from memory, and one that comes to it after the delete loads the base's current index;
 * deleting the base deletes its index.
 */

async function base(t: Tenant, kbId: string) {
  const { data } = await KnowledgeBaseEntity.get({ workspaceId: t.workspaceId, knowledgeBaseId: kbId }).go({
    consistent: true,
  });
  return data!;
}

async function addListing(t: Tenant, kbId: string, body: Json): Promise<Json> {
  const res = await api('POST', `${ws(t)}/knowledge-bases/${kbId}/items`, { token: t.owner.token, body });
  expect(res.status).toBe(201);
  return res.body;
}

/** Waits until the base's recorded index finds the item, and returns the base as it is then. */
async function indexedWith(t: Tenant, kbId: string, q: string, itemId: string) {
  return waitFor(
    async () => {
      const res = await api('GET', `${ws(t)}/knowledge-bases/${kbId}/search?q=${encodeURIComponent(q)}`, {
        token: t.owner.token,
      });
      if (!res.body.items?.some((hit: Json) => hit.item_id === itemId)) return undefined;
      return base(t, kbId);
    },
    { what: `"${q}" to find ${itemId}`, timeoutMs: 30_000, intervalMs: 200 },
  );
}

test('a superseded index object is deleted; old readers keep working or reload; a deleted base takes its index', async () => {
  const tenant = await newTenant();
  const kb = (
    await api('POST', `${ws(tenant)}/knowledge-bases`, {
      token: tenant.owner.token,
      body: { name: 'Listings', kind: 'listings' },
    })
  ).body;
  const first = await addListing(tenant, kb.id, {
    address: '12 Harbour Street',
    suburb: 'Manly',
    status: 'available',
  });
  const v1 = await indexedWith(tenant, kb.id, 'Manly', first.id);
  expect(v1.indexKey).toBeDefined();
  expect(await objectExists(v1.indexKey!)).toBe(true);
  // This process (a container) loads version 1 and keeps it.
  expect((await searchBase(v1, 'Manly', 5)).map((h) => h.item_id)).toEqual([first.id]);

  const second = await addListing(tenant, kb.id, {
    address: '3 Beach Road',
    suburb: 'Manly',
    status: 'sold',
  });
  const v2 = await indexedWith(tenant, kb.id, 'Beach', second.id);
  expect(v2.indexKey).not.toBe(v1.indexKey);
  await waitFor(async () => ((await objectExists(v1.indexKey!)) ? undefined : true), {
    what: 'the superseded index object to be deleted',
    timeoutMs: 20_000,
    intervalMs: 200,
  });
  expect(await objectExists(v2.indexKey!)).toBe(true);

  // The container that loaded version 1 answers from memory, as it did.
  expect((await searchBase(v1, 'Manly', 5)).map((h) => h.item_id)).toEqual([first.id]);
  // A new container that read the base before the new index was recorded finds version 1 gone,
  // reads the base again and answers from version 2.
  forgetLoadedIndexes();
  const hits = (await searchBase(v1, 'Manly', 5)).map((h) => h.item_id);
  expect(hits.sort()).toEqual([first.id, second.id].sort());

  const deleted = await api('DELETE', `${ws(tenant)}/knowledge-bases/${kb.id}`, {
    token: tenant.owner.token,
  });
  expect(deleted.status).toBe(204);
  expect(await objectExists(v2.indexKey!)).toBe(false);
}, 90_000);
