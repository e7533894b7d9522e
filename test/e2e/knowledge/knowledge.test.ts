import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import { addMember, apiKey, newTenant, ws, type Tenant, type User } from '../calling/fixtures.js';
import { corruptPdf, docxWithText, passwordPdf, pdfWithText } from '../../fixtures/knowledge/files.js';

/**
 * Knowledge bases through the gateway: listings and documents (text, PDF, DOCX uploaded to the
 * presigned URL) extracted by the worker, indexed and searched; bad files fail with their reasons;
 * tenancy, roles and scopes on every route.
 */

let tenant: Tenant;
let other: Tenant;
let viewer: User;

beforeAll(async () => {
  tenant = await newTenant();
  other = await newTenant();
  viewer = await addMember(tenant, 'viewer');
});

const basesPath = (t: Tenant) => `${ws(t)}/knowledge-bases`;
const itemsPath = (t: Tenant, kbId: string) => `${basesPath(t)}/${kbId}/items`;

async function createBase(t: Tenant, kind: 'listings' | 'documents', name = `${kind} base`): Promise<Json> {
  const res = await api('POST', basesPath(t), { token: t.owner.token, body: { name, kind } });
  expect(res.status).toBe(201);
  return res.body;
}

async function search(t: Tenant, kbId: string, q: string, token = t.owner.token) {
  return api('GET', `${basesPath(t)}/${kbId}/search?${new URLSearchParams({ q })}`, { token });
}

/** Waits until the search finds the item (the index follows writes within moments). */
async function searchable(t: Tenant, kbId: string, q: string, itemId: string): Promise<Json> {
  return waitFor(
    async () => {
      const res = await search(t, kbId, q);
      expect(res.status).toBe(200);
      return res.body.items.find((hit: Json) => hit.item_id === itemId);
    },
    { what: `"${q}" to find ${itemId}`, timeoutMs: 30_000, intervalMs: 200 },
  );
}

async function settled(t: Tenant, kbId: string, itemId: string): Promise<Json> {
  return waitFor(
    async () => {
      const res = await api('GET', `${itemsPath(t, kbId)}/${itemId}`, { token: t.owner.token });
      expect(res.status).toBe(200);
      return res.body.status === 'ready' || res.body.status === 'failed' ? res.body : undefined;
    },
    { what: `document ${itemId} to be ready or failed`, timeoutMs: 60_000, intervalMs: 200 },
  );
}

async function upload(t: Tenant, kbId: string, fileName: string, contentType: string, bytes: Uint8Array) {
  const created = await api('POST', itemsPath(t, kbId), {
    token: t.owner.token,
    body: { title: fileName, file_name: fileName, content_type: contentType },
  });
  expect(created.status).toBe(202);
  expect(created.body).toMatchObject({ type: 'document', status: 'processing', file_name: fileName });
  expect(created.body.upload_url).toMatch(/^http/);
  const put = await fetch(created.body.upload_url, { method: 'PUT', body: bytes });
  expect(put.status).toBe(200);
  return created.body;
}

/** Writes `bytes` at the object a (path-style) presigned URL names, by multipart upload. */
async function putInParts(url: URL, bytes: Buffer): Promise<void> {
  const [, bucket, ...key] = url.pathname.split('/').map(decodeURIComponent);
  const s3 = new S3Client({ region: process.env.AWS_REGION, forcePathStyle: true });
  const Key = key.join('/');
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key }));
  const parts = [];
  const size = 10 * 1024 * 1024;
  for (let i = 0; i * size < bytes.length; i += 1) {
    const { ETag } = await s3.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key,
        UploadId,
        PartNumber: i + 1,
        Body: bytes.subarray(i * size, (i + 1) * size),
      }),
    );
    parts.push({ ETag, PartNumber: i + 1 });
  }
  await s3.send(
    new CompleteMultipartUploadCommand({ Bucket: bucket, Key, UploadId, MultipartUpload: { Parts: parts } }),
  );
  s3.destroy();
}

describe('knowledge bases', () => {
  test('create, get, list, rename, delete; 422 on bad bodies; tenancy, viewer and scopes', async () => {
    const kb = await createBase(tenant, 'documents', 'Policies');
    expect(kb).toMatchObject({
      id: expect.stringMatching(/^kb_/),
      name: 'Policies',
      kind: 'documents',
      item_count: 0,
    });
    expect((await api('GET', `${basesPath(tenant)}/${kb.id}`, { token: viewer.token })).body).toEqual(kb);
    const list = await api('GET', basesPath(tenant), { token: viewer.token });
    expect(list.body.items.map((b: Json) => b.id)).toContain(kb.id);

    const renamed = await api('PATCH', `${basesPath(tenant)}/${kb.id}`, {
      token: tenant.owner.token,
      body: { name: 'House rules' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('House rules');

    for (const body of [
      { name: 'x', kind: 'videos' },
      { kind: 'listings' },
      { name: 'x', kind: 'listings', extra: 1 },
    ]) {
      const bad = await api('POST', basesPath(tenant), { token: tenant.owner.token, body });
      expect(bad.status).toBe(422);
    }
    // Viewers read, never write.
    const viewerWrite = await api('POST', basesPath(tenant), {
      token: viewer.token,
      body: { name: 'v', kind: 'listings' },
    });
    expect(viewerWrite.status).toBe(403);
    expect(viewerWrite.body).toEqual({ error: 'Viewers have read-only access' });
    expect((await api('DELETE', `${basesPath(tenant)}/${kb.id}`, { token: viewer.token })).status).toBe(403);
    // Another tenant sees nothing.
    const foreign = `/api/v1/workspaces/${tenant.workspaceId}/knowledge-bases/${kb.id}`;
    expect((await api('GET', foreign, { token: other.owner.token })).status).toBe(404);
    expect((await api('GET', `${basesPath(other)}/${kb.id}`, { token: other.owner.token })).body).toEqual({
      error: 'Knowledge base not found',
    });
    expect(
      (await api('GET', `${basesPath(other)}/${kb.id}/search?q=rules`, { token: other.owner.token })).status,
    ).toBe(404);
    expect((await api('GET', `${basesPath(tenant)}/kb_nope`, { token: tenant.owner.token })).status).toBe(
      404,
    );
    // API keys: knowledge:read reads, knowledge:write writes.
    const reader = await apiKey(tenant, ['knowledge:read']);
    expect((await api('GET', `${basesPath(tenant)}/${kb.id}`, { token: reader.key })).status).toBe(200);
    expect(
      (await api('POST', basesPath(tenant), { token: reader.key, body: { name: 'k', kind: 'listings' } }))
        .status,
    ).toBe(403);
    const writer = await apiKey(tenant, ['knowledge:write']);
    expect(
      (await api('POST', basesPath(tenant), { token: writer.key, body: { name: 'k', kind: 'listings' } }))
        .status,
    ).toBe(201);

    expect((await api('DELETE', `${basesPath(tenant)}/${kb.id}`, { token: tenant.owner.token })).status).toBe(
      204,
    );
    expect((await api('GET', `${basesPath(tenant)}/${kb.id}`, { token: tenant.owner.token })).status).toBe(
      404,
    );
  });
});

describe('listings', () => {
  test('a listing is searchable by address, suburb, description (prefix and typo); 409 on a repeated external id', async () => {
    const kb = await createBase(tenant, 'listings');
    const created = await api('POST', itemsPath(tenant, kb.id), {
      token: tenant.owner.token,
      body: {
        external_id: 'EXT-1',
        address: '12 Harbour Street',
        suburb: 'Manly',
        state: 'NSW',
        postcode: '2095',
        price_text: '$1,250,000',
        status: 'available',
        bedrooms: 3,
        bathrooms: 2,
        description: 'Sunny family home with harbour views and a renovated kitchen.',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^kbi_/),
      type: 'listing',
      full_address: '12 Harbour Street, Manly NSW 2095',
      status: 'available',
    });
    const other2 = await api('POST', itemsPath(tenant, kb.id), {
      token: tenant.owner.token,
      body: {
        address: '3 Desert Road',
        suburb: 'Alice Springs',
        status: 'sold',
        description: 'Red dirt and sunsets.',
      },
    });
    expect(other2.status).toBe(201);

    const hit = await searchable(tenant, kb.id, 'manly', created.body.id);
    expect(hit).toMatchObject({
      id: created.body.id,
      type: 'listing',
      title: '12 Harbour Street, Manly NSW 2095',
      listing: { external_id: 'EXT-1', price_text: '$1,250,000', status: 'available', bedrooms: 3 },
    });
    // Prefix and fuzzy matching; the best match first.
    expect((await search(tenant, kb.id, 'renovat')).body.items[0].item_id).toBe(created.body.id);
    expect((await search(tenant, kb.id, 'harbor kitchen')).body.items[0].item_id).toBe(created.body.id);
    await searchable(tenant, kb.id, 'sunsets', other2.body.id);

    const dup = await api('POST', itemsPath(tenant, kb.id), {
      token: tenant.owner.token,
      body: { external_id: 'EXT-1', address: 'elsewhere', status: 'available' },
    });
    expect(dup.status).toBe(409);
    // A document body on a listings base: 422.
    const wrong = await api('POST', itemsPath(tenant, kb.id), {
      token: tenant.owner.token,
      body: { title: 'Doc', text: 'hello' },
    });
    expect(wrong.status).toBe(422);

    const patched = await api('PATCH', `${itemsPath(tenant, kb.id)}/${created.body.id}`, {
      token: tenant.owner.token,
      body: { status: 'under_offer', description: 'Now with a swimming pool.' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'under_offer', description: 'Now with a swimming pool.' });
    await searchable(tenant, kb.id, 'swimming', created.body.id);

    expect(
      (await api('DELETE', `${itemsPath(tenant, kb.id)}/${other2.body.id}`, { token: tenant.owner.token }))
        .status,
    ).toBe(204);
    await waitFor(async () => (await search(tenant, kb.id, 'sunsets')).body.items.length === 0, {
      what: 'the deleted listing to leave the index',
    });
    const listed = await api('GET', itemsPath(tenant, kb.id), { token: viewer.token });
    expect(listed.body.items.map((i: Json) => i.id)).toEqual([created.body.id]);
  });

  test('search: q empty, missing or over 1,000 characters is 422', async () => {
    const kb = await createBase(tenant, 'listings');
    for (const q of ['', '   ', 'x'.repeat(1001), 'y'.repeat(10_000)]) {
      const res = await search(tenant, kb.id, q);
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['query', 'q']);
    }
    expect(
      (await api('GET', `${basesPath(tenant)}/${kb.id}/search`, { token: tenant.owner.token })).status,
    ).toBe(422);
    const ok = await search(tenant, kb.id, 'x'.repeat(1000));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ items: [], next_cursor: null });
  });
});

describe('documents', () => {
  test('{title, text}: processing, then ready and searchable, with the matching passage', async () => {
    const kb = await createBase(tenant, 'documents');
    const filler = 'General information about the agency and its office hours. '.repeat(30);
    const res = await api('POST', itemsPath(tenant, kb.id), {
      token: tenant.owner.token,
      body: {
        title: 'Pet policy',
        text: `${filler}\n\nTenants may keep one small dog with the landlord's written approval.\n\n${filler}`,
      },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ type: 'document', status: 'processing', title: 'Pet policy' });
    expect(res.body.upload_url).toBeUndefined();
    const ready = await settled(tenant, kb.id, res.body.id);
    expect(ready).toMatchObject({ status: 'ready', chunks: expect.any(Number), failure_reason: null });
    const hit = (await search(tenant, kb.id, 'dog approval')).body.items[0];
    expect(hit).toMatchObject({ item_id: res.body.id, type: 'document', title: 'Pet policy' });
    expect(hit.passage).toMatch(/one small dog/);
    expect(hit.passage.length).toBeLessThanOrEqual(302);
  });

  test('PDF and DOCX uploaded to upload_url are extracted and searchable; TXT and Markdown too', async () => {
    const kb = await createBase(tenant, 'documents');
    const pdf = await upload(
      tenant,
      kb.id,
      'brochure.pdf',
      'application/pdf',
      pdfWithText(['Waterfront brochure', 'The jetty has room for two kayaks.']),
    );
    const docx = await upload(
      tenant,
      kb.id,
      'lease.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      await docxWithText(['Lease terms', 'The bond equals four weeks of rent.']),
    );
    const md = await upload(
      tenant,
      kb.id,
      'faq.md',
      'text/markdown',
      Buffer.from('# FAQ\n\nParking: one garage space.'),
    );
    for (const item of [pdf, docx, md]) expect((await settled(tenant, kb.id, item.id)).status).toBe('ready');
    expect((await search(tenant, kb.id, 'kayaks')).body.items[0].item_id).toBe(pdf.id);
    expect((await search(tenant, kb.id, 'bond')).body.items[0].item_id).toBe(docx.id);
    expect((await search(tenant, kb.id, 'garage')).body.items[0].item_id).toBe(md.id);
    const got = await api('GET', `${itemsPath(tenant, kb.id)}/${pdf.id}`, { token: viewer.token });
    expect(got.body).toMatchObject({
      file_name: 'brochure.pdf',
      content_type: 'application/pdf',
      size_bytes: expect.any(Number),
    });
    expect(got.body.upload_url).toBeUndefined();
  });

  // A 0-byte file fails as 'the file is empty (0 bytes)' (test/unit/knowledge.test.ts: the local S3
  // stand-in refuses an empty PUT, which S3 accepts).
  test('bad files fail with a reason: corrupt PDF, password PDF, 0 bytes, over 50 MB, binary text, wrong type', async () => {
    const kb = await createBase(tenant, 'documents');
    const cases: [string, string, Uint8Array, RegExp][] = [
      ['corrupt.pdf', 'application/pdf', corruptPdf(), /PDF is corrupt/],
      ['locked.pdf', 'application/pdf', passwordPdf(), /password-protected/],
      ['notes.pdf', 'application/pdf', Buffer.from('just some text, not a PDF'), /not a PDF/],
      ['binary.txt', 'text/plain', Buffer.from([0x00, 0x01, 0x02, 0xff]), /not text/],
      [
        'broken.docx',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        Buffer.from('nope'),
        /not a DOCX/,
      ],
    ];
    const items = [];
    for (const [name, type, bytes] of cases) items.push(await upload(tenant, kb.id, name, type, bytes));
    for (const [i, [, , , reason]] of cases.entries()) {
      const item = await settled(tenant, kb.id, items[i].id);
      expect(item).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(reason) });
    }
    // 60 MB: S3 takes it at upload_url; the local stand-in takes at most 11 MiB a request, so the test
    // puts it in parts, at the key upload_url names.
    const huge = (
      await api('POST', itemsPath(tenant, kb.id), {
        token: tenant.owner.token,
        body: { title: 'Huge', file_name: 'huge.txt', content_type: 'text/plain' },
      })
    ).body;
    await putInParts(new URL(huge.upload_url), Buffer.alloc(60 * 1024 * 1024, 'a'));
    expect(await settled(tenant, kb.id, huge.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'the file is larger than 50 MB (60.0 MB)',
    });

    // 0 bytes: the local stand-in answers a presigned PUT without a body with a 500, so the test
    // writes the empty object at the key upload_url names.
    const empty = (
      await api('POST', itemsPath(tenant, kb.id), {
        token: tenant.owner.token,
        body: { title: 'Empty', file_name: 'empty.md', content_type: 'text/markdown' },
      })
    ).body;
    const [, emptyBucket, ...emptyKey] = new URL(empty.upload_url).pathname
      .split('/')
      .map(decodeURIComponent);
    await new S3Client({ region: process.env.AWS_REGION, forcePathStyle: true }).send(
      new PutObjectCommand({ Bucket: emptyBucket, Key: emptyKey.join('/'), Body: new Uint8Array(0) }),
    );
    expect(await settled(tenant, kb.id, empty.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'the file is empty (0 bytes)',
    });

    // An unsupported type is refused at once.
    const wrong = await api('POST', itemsPath(tenant, kb.id), {
      token: tenant.owner.token,
      body: { title: 'Sheet', file_name: 'prices.xlsx', content_type: 'application/vnd.ms-excel' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail[0]).toMatchObject({
      loc: ['body', 'content_type'],
      msg: expect.stringMatching(/unsupported type/),
    });
    for (const body of [
      { title: 'x' },
      { title: 'x', text: 'a', file_name: 'a.txt', content_type: 'text/plain' },
      { title: 'x', file_name: 'a.pdf' },
    ]) {
      expect((await api('POST', itemsPath(tenant, kb.id), { token: tenant.owner.token, body })).status).toBe(
        422,
      );
    }
    // Failed documents are not in the search.
    expect((await search(tenant, kb.id, 'pricing')).body.items).toEqual([]);
  }, 120_000);
});
