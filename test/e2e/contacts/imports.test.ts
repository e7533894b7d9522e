import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { sendMessage } from '../../../functions/platform/queue.js';
import { importedContactId } from '../../../functions/contacts/contact-import-rows.js';
import { planImport, processChunk } from '../../../functions/contacts/import-worker.js';
import { createImportedContacts } from '../../../functions/contacts/bulk-creation.js';
import { checkContactInput } from '../../../functions/contacts/input.js';
import { ContactImportEntity, ContactImportRowEntity } from '../../../functions/contacts/entities.js';
import {
  addMember,
  allPages,
  apiKey,
  contactsPath,
  createContact,
  newTenant,
  uniqueMobile,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * Contact imports through the gateway: CSV and vCard files sent as the body or uploaded to the
 * presigned URL, imported on the imports queue in chunks; exact counts, rejected rows with their
 * numbers and reasons, merges that only fill empty fields, and a chunk received twice or cut short.
 */

let tenant: Tenant;
let other: Tenant;
let viewer: User;

beforeAll(async () => {
  tenant = await newTenant();
  other = await newTenant();
  viewer = await addMember(tenant, 'viewer');
});

const importsPath = (t: Tenant) => `${contactsPath(t)}/imports`;

async function postFile(
  t: Tenant,
  body: string | Uint8Array,
  contentType = 'text/csv',
  token = t.owner.token,
) {
  return api('POST', importsPath(t), { token, rawBody: body, headers: { 'content-type': contentType } });
}

async function finished(t: Tenant, jobId: string, token = t.owner.token): Promise<Json> {
  return waitFor(
    async () => {
      const res = await api('GET', `${importsPath(t)}/${jobId}`, { token });
      expect(res.status).toBe(200);
      return res.body.status === 'completed' || res.body.status === 'failed' ? res.body : undefined;
    },
    { what: `import ${jobId} to end`, timeoutMs: 60_000, intervalMs: 200 },
  );
}

async function importFile(t: Tenant, body: string | Uint8Array, contentType = 'text/csv'): Promise<Json> {
  const res = await postFile(t, body, contentType);
  expect(res.status).toBe(202);
  return finished(t, res.body.id);
}

async function contactsOf(t: Tenant): Promise<Json[]> {
  return (await allPages(contactsPath(t), t.owner.token)).items;
}

const byPhone = (contacts: Json[], phone: string) => contacts.find((c) => c.phone === phone);
const national = (e164: string) => `0${e164.slice(3)}`;

describe('CSV sent as the body', () => {
  test('imports every row with exact counts; headers matched by name, others become attributes', async () => {
    const t = await newTenant();
    const [a, b] = [uniqueMobile(), uniqueMobile()];
    const csv = [
      ' First Name ,LAST_NAME,Mobile,E-mail,Tags,Company,  Favourite Colour ',
      `Ada,Lovelace,${national(a)},ada@example.com,"vip; lead",Analytical,blue`,
      `Grace,Hopper,${b},,navy,,`,
      `,,,only@example.com,,,`,
    ].join('\r\n');
    const job = await importFile(t, csv);
    expect(job).toMatchObject({
      status: 'completed',
      progress: { done: 3, total: 3 },
      format: 'csv',
      counts: { total: 3, created: 3, merged: 0, rejected: 0 },
      errors: [],
      warnings: [],
    });
    const contacts = await contactsOf(t);
    expect(byPhone(contacts, a)).toMatchObject({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      tags: ['vip', 'lead'],
      // Attribute headers are stored under one normalised key (lower case, words joined by `_`).
      attributes: { company: 'Analytical', favourite_colour: 'blue' },
      source: 'csv',
    });
    expect(byPhone(contacts, b)).toMatchObject({ first_name: 'Grace', tags: ['navy'] });
    expect(contacts.find((c) => c.email === 'only@example.com')).toMatchObject({ phone: null });
  });

  test('rows with neither a valid phone nor an email are rejected with their number and reason; the rest import', async () => {
    const t = await newTenant();
    const good = uniqueMobile();
    const csv = [
      'name,phone,email',
      `Good Row,${good},`,
      'No Contact,,',
      'Bad Phone,12,',
      'Bad Both,abc,not-an-email',
      `Bad Phone Good Email,12,fine@example.com`,
    ].join('\n');
    const job = await importFile(t, csv);
    expect(job.counts).toEqual({ total: 5, created: 2, merged: 0, rejected: 3 });
    expect(job.errors.map((e: Json) => e.row)).toEqual([2, 3, 4]);
    expect(job.errors[0].reason).toMatch(/no phone number and no email address/);
    expect(job.errors[1].reason).toMatch(/phone "12" is not a valid phone number/);
    expect(job.errors[2].reason).toMatch(/email "not-an-email" is not a valid email address/);
    const contacts = await contactsOf(t);
    expect(byPhone(contacts, good)).toMatchObject({ first_name: 'Good', last_name: 'Row' });
    expect(contacts.find((c) => c.email === 'fine@example.com')).toMatchObject({ phone: null });
  });

  test('duplicates within the file and with existing contacts merge: empty fields filled, nothing overwritten', async () => {
    const t = await newTenant();
    const [existing, fresh] = [uniqueMobile(), uniqueMobile()];
    await createContact(t, {
      first_name: 'Kept',
      phone: existing,
      tags: ['old'],
      attributes: { tier: 'gold' },
    });
    const csv = [
      'first_name,last_name,phone,email,tags,tier,city',
      `Overwrite,Attempt,${existing},kept@example.com,new,silver,Perth`,
      `Fresh,One,${fresh},,,,`,
      `Again,,${national(fresh)},fresh@example.com,,,Sydney`,
      `,,,fresh@example.com,x,,`,
    ].join('\n');
    const job = await importFile(t, csv);
    expect(job.counts).toEqual({ total: 4, created: 1, merged: 3, rejected: 0 });
    const contacts = await contactsOf(t);
    expect(contacts).toHaveLength(2);
    expect(byPhone(contacts, existing)).toMatchObject({
      first_name: 'Kept',
      last_name: '',
      email: 'kept@example.com',
      tags: ['old', 'new'],
      attributes: { tier: 'gold', city: 'Perth' },
      source: 'manual',
    });
    expect(byPhone(contacts, fresh)).toMatchObject({
      first_name: 'Fresh',
      last_name: 'One',
      email: 'fresh@example.com',
      attributes: { city: 'Sydney' },
      tags: ['x'],
    });
  });

  test('a UTF-8 BOM is dropped; a Latin-1 file is read as Latin-1 when uploaded', async () => {
    const t = await newTenant();
    const phone = uniqueMobile();
    const job = await importFile(t, `\ufeffFirst Name,Phone\nZoë,${phone}\n`);
    expect(job.counts).toMatchObject({ total: 1, created: 1 });
    expect(byPhone(await contactsOf(t), phone)).toMatchObject({ first_name: 'Zoë' });

    const latin = uniqueMobile();
    const bytes = Buffer.from(`first_name,last_name,phone\nJosé,Müller,${latin}\n`, 'latin1');
    const created = await api('POST', importsPath(t), { token: t.owner.token, body: { format: 'csv' } });
    expect(created.status).toBe(202);
    const put = await fetch(created.body.upload_url, { method: 'PUT', body: bytes });
    expect(put.status).toBe(200);
    const started = await api('POST', `${importsPath(t)}/${created.body.id}/start`, { token: t.owner.token });
    expect(started.status).toBe(202);
    expect((await finished(t, created.body.id)).counts).toMatchObject({ total: 1, created: 1 });
    expect(byPhone(await contactsOf(t), latin)).toMatchObject({ first_name: 'José', last_name: 'Müller' });
  });

  test('a Latin-1 body sent directly is refused clearly (API Gateway decodes text bodies as UTF-8)', async () => {
    const res = await postFile(tenant, Buffer.from(`first_name,phone\nJosé,${uniqueMobile()}\n`, 'latin1'));
    expect(res.status).toBe(422);
    expect(res.text).toMatch(/not UTF-8/);
  });

  test('formula cells are kept as text, never evaluated', async () => {
    const t = await newTenant();
    const phone = uniqueMobile();
    const csv = `first_name,last_name,phone,note,link\n"=1+2","@SUM(A1)",${phone},"=cmd|' /C calc'!A0",-2+3\n`;
    const job = await importFile(t, csv);
    expect(job.counts).toMatchObject({ total: 1, created: 1 });
    expect(byPhone(await contactsOf(t), phone)).toMatchObject({
      first_name: '=1+2',
      last_name: '@SUM(A1)',
      attributes: { note: "=cmd|' /C calc'!A0", link: '-2+3' },
    });
  });

  test('header only, an empty file and no phone or email column fail with a reason and no counts', async () => {
    const headerOnly = await importFile(tenant, 'first_name,phone,email\n');
    expect(headerOnly).toMatchObject({
      status: 'failed',
      failure_reason: 'the file has no data rows',
      counts: { total: 0, created: 0, merged: 0, rejected: 0 },
    });
    const empty = await postFile(tenant, '');
    // An empty text/csv body: the file is empty.
    expect(empty.status).toBe(202);
    expect((await finished(tenant, empty.body.id)).failure_reason).toBe('the file is empty');
    const noColumn = await importFile(tenant, 'first_name,city\nA,B\n');
    expect(noColumn.status).toBe('failed');
    expect(noColumn.failure_reason).toMatch(/no phone or email column/);
    const unreadable = await importFile(tenant, 'phone,name\n"+61491570156,Unclosed\n');
    expect(unreadable.status).toBe('failed');
    expect(unreadable.failure_reason).toMatch(/cannot be read/);
  });

  test('a body over 5 MB is 413 with a hint; over the gateway’s 6 MB it is 413 JSON too', async () => {
    const row = `someone,${'x'.repeat(90)}@example.com\n`;
    const big = `name,email\n${row.repeat(Math.ceil((5.2 * 1024 * 1024) / row.length))}`;
    const res = await postFile(tenant, big);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/at most 5 MB.*upload_url/);
    const huge = await postFile(tenant, Buffer.alloc(7 * 1024 * 1024, 'a'));
    expect(huge.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(huge.body).toEqual({ error: 'Request body too large' });
  });
});

describe('vCard', () => {
  test('3.0 and 4.0 cards import; a card without phone or email is rejected', async () => {
    const t = await newTenant();
    const [a, b] = [uniqueMobile(), uniqueMobile()];
    const vcf = [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'N:Lovelace;Ada;;;',
      'FN:Ada Lovelace',
      `TEL;TYPE=CELL:${a}`,
      'EMAIL;TYPE=INTERNET:ada@example.com',
      'CATEGORIES:vip,lead',
      'ORG:Analytical Engines',
      'END:VCARD',
      'BEGIN:VCARD',
      'VERSION:4.0',
      'FN:Grace Hopper',
      `TEL;VALUE=uri;TYPE=cell:tel:${b}`,
      'TITLE:Rear Admiral',
      'END:VCARD',
      'BEGIN:VCARD',
      'VERSION:4.0',
      'FN:Nobody Reachable',
      'END:VCARD',
      '',
    ].join('\r\n');
    const job = await importFile(t, vcf, 'text/vcard');
    expect(job).toMatchObject({
      status: 'completed',
      format: 'vcf',
      counts: { total: 3, created: 2, rejected: 1 },
    });
    expect(job.errors).toEqual([
      { row: 3, reason: expect.stringMatching(/no phone number and no email address/) },
    ]);
    const contacts = await contactsOf(t);
    expect(byPhone(contacts, a)).toMatchObject({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      tags: ['vip', 'lead'],
      attributes: { company: 'Analytical Engines' },
      source: 'vcf',
    });
    expect(byPhone(contacts, b)).toMatchObject({
      first_name: 'Grace',
      last_name: 'Hopper',
      attributes: { title: 'Rear Admiral' },
    });
  });

  test('a file that is not vCard fails', async () => {
    const job = await importFile(tenant, 'hello there', 'text/vcard');
    expect(job).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/vCard/) });
  });
});

describe('presigned upload', () => {
  test('POST {format} → pending with upload_url; start before the upload is 409; after it the job runs', async () => {
    const t = await newTenant();
    const created = await api('POST', importsPath(t), {
      token: t.owner.token,
      body: { format: 'csv', file_name: 'leads.csv' },
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^job_/),
      status: 'pending',
      file_name: 'leads.csv',
    });
    expect(created.body.upload_url).toMatch(/^http/);
    const early = await api('POST', `${importsPath(t)}/${created.body.id}/start`, { token: t.owner.token });
    expect(early.status).toBe(409);
    const phone = uniqueMobile();
    const put = await fetch(created.body.upload_url, {
      method: 'PUT',
      body: `phone,first_name\n${phone},Up\n`,
    });
    expect(put.status).toBe(200);
    const start = await api('POST', `${importsPath(t)}/${created.body.id}/start`, { token: t.owner.token });
    expect(start.status).toBe(202);
    expect(start.body.status).toBe('processing');
    const job = await finished(t, created.body.id);
    expect(job.counts).toEqual({ total: 1, created: 1, merged: 0, rejected: 0 });
    // Starting again answers the job as it is.
    const again = await api('POST', `${importsPath(t)}/${created.body.id}/start`, { token: t.owner.token });
    expect(again.body.status).toBe('completed');
    const list = await api('GET', importsPath(t), { token: t.owner.token });
    expect(list.body.items.map((j: Json) => j.id)).toEqual([created.body.id]);
  });

  test('bad input is 422', async () => {
    const res = await api('POST', importsPath(tenant), {
      token: tenant.owner.token,
      body: { format: 'xls' },
    });
    expect(res.status).toBe(422);
    const extra = await api('POST', importsPath(tenant), {
      token: tenant.owner.token,
      body: { format: 'csv', x: 1 },
    });
    expect(extra.status).toBe(422);
  });
});

describe('chunks received twice or cut short', () => {
  test('a large file in several chunks, a chunk cut half-way then redelivered, and duplicates of every message: exact counts', async () => {
    const t = await newTenant();
    const rows = 600;
    const phones = Array.from({ length: rows }, () => uniqueMobile());
    const lines = ['first_name,phone,email'];
    phones.forEach((phone, i) => {
      if (i % 50 === 7) lines.push(`Invalid ${i},,`);
      else if (i % 40 === 3) lines.push(`Dup ${i},${phones[i - 1]},`);
      else lines.push(`Row ${i},${phone},`);
    });
    const invalid = phones.filter((_, i) => i % 50 === 7).length;
    const dups = phones.filter((_, i) => i % 50 !== 7 && i % 40 === 3).length; // never next to an invalid row
    // The file is uploaded and planned (in this process, its chunk messages not sent), then chunk 1 is
    // cut short as a crashed worker leaves it; then every chunk is sent, chunk 1 twice, and the plan again.
    const created = await api('POST', importsPath(t), { token: t.owner.token, body: { format: 'csv' } });
    const jobId = created.body.id as string;
    expect((await fetch(created.body.upload_url, { method: 'PUT', body: lines.join('\n') })).status).toBe(
      200,
    );
    await ContactImportEntity.patch({ workspaceId: t.workspaceId, jobId }).set({ status: 'processing' }).go();
    expect(await planImport(t.workspaceId, jobId, { send: false })).toMatch(/in 3 chunks/);
    await expect(processChunk(t.workspaceId, jobId, 1, { failAfterRows: 20 })).rejects.toThrow(/half-way/);
    // Cut short: some of the chunk's contacts are written, not all, and nothing is counted yet.
    const partial = (await contactsOf(t)).length;
    expect(partial).toBeGreaterThanOrEqual(10);
    expect(partial).toBeLessThan(240);
    const midway = (await api('GET', `${importsPath(t)}/${jobId}`, { token: t.owner.token })).body;
    expect(midway.progress).toEqual({ done: 0, total: rows });
    for (const chunk of [1, 0, 1, 2]) {
      await sendMessage('imports', {
        type: 'contacts.import.chunk',
        workspace_id: t.workspaceId,
        job_id: jobId,
        chunk,
      });
    }
    await sendMessage('imports', {
      type: 'contacts.import.plan',
      workspace_id: t.workspaceId,
      job_id: jobId,
    });
    const job = await finished(t, jobId);
    await waitForQuiescence();
    const after = (await api('GET', `${importsPath(t)}/${jobId}`, { token: t.owner.token })).body;
    expect(after.counts).toEqual(job.counts);
    expect(after.counts).toEqual({
      total: rows,
      created: rows - invalid - dups,
      merged: dups,
      rejected: invalid,
    });
    expect(after.counts.created + after.counts.merged + after.counts.rejected).toBe(rows);
    // No record per row: a contact import keeps its rows' outcomes in its chunks' records only.
    const outcomes = await ContactImportRowEntity.query
      .byJob({ workspaceId: t.workspaceId, jobId })
      .go({ pages: 'all' });
    expect(outcomes.data).toHaveLength(0);
    const contacts = await contactsOf(t);
    expect(contacts.length).toBe(after.counts.created);
    // Every contact is one row's (its id says which), and every row that created one has it.
    const createdRows = phones.flatMap((_, i) => (i % 50 === 7 || i % 40 === 3 ? [] : [i + 1]));
    expect(contacts.map((c) => c.id).sort()).toEqual(
      createdRows.map((row) => importedContactId(jobId, row)).sort(),
    );
    expect(after.errors.map((e: Json) => e.row)).toEqual(
      phones.flatMap((_, i) => (i % 50 === 7 ? [i + 1] : [])),
    );
  });
});

describe('who may import', () => {
  let jobId: string;
  beforeAll(async () => {
    jobId = (await importFile(tenant, `phone\n${uniqueMobile()}\n`)).id;
  });

  test('another workspace’s job is 404; unknown and malformed ids are 404', async () => {
    for (const path of [
      `${importsPath(other)}/${jobId}`,
      `${importsPath(tenant)}/job_01JZZZZZZZZZZZZZZZZZZZZZZZ`,
      `${importsPath(tenant)}/nope`,
    ]) {
      const token = path.includes(other.workspaceId) ? other.owner.token : tenant.owner.token;
      expect((await api('GET', path, { token })).status).toBe(404);
      expect((await api('POST', `${path}/start`, { token })).status).toBe(404);
    }
    expect((await api('GET', `${importsPath(tenant)}/${jobId}`, { token: other.owner.token })).status).toBe(
      404,
    );
    expect((await api('GET', importsPath(other), { token: other.owner.token })).body.items).toEqual([]);
  });

  test('a viewer reads imports and may not start one', async () => {
    expect((await api('GET', `${importsPath(tenant)}/${jobId}`, { token: viewer.token })).status).toBe(200);
    expect((await api('GET', importsPath(tenant), { token: viewer.token })).status).toBe(200);
    expect((await postFile(tenant, `phone\n${uniqueMobile()}\n`, 'text/csv', viewer.token)).status).toBe(403);
    expect(
      (await api('POST', importsPath(tenant), { token: viewer.token, body: { format: 'csv' } })).status,
    ).toBe(403);
  });

  test('API keys: contacts:read reads, contacts:write imports, others are 403', async () => {
    const reader = await apiKey(tenant, ['contacts:read']);
    const writer = await apiKey(tenant, ['contacts:write']);
    const caller = await apiKey(tenant, ['start_call']);
    expect((await api('GET', `${importsPath(tenant)}/${jobId}`, { token: reader.key })).status).toBe(200);
    expect((await postFile(tenant, `phone\n${uniqueMobile()}\n`, 'text/csv', reader.key)).status).toBe(403);
    expect((await api('GET', `${importsPath(tenant)}/${jobId}`, { token: caller.key })).status).toBe(403);
    const res = await postFile(tenant, `phone\n${uniqueMobile()}\n`, 'text/csv', writer.key);
    expect(res.status).toBe(202);
    expect((await finished(tenant, res.body.id)).status).toBe('completed');
  });
});

describe('the bulk path', () => {
  test('a contact whose number is taken is not written in bulk; a transaction a condition refuses writes none of its contacts; a row asked again is created once', async () => {
    const t = await newTenant();
    const taken = uniqueMobile();
    const fresh = uniqueMobile();
    const existing = await api('POST', contactsPath(t), {
      token: t.owner.token,
      body: { first_name: 'Already', phone: taken },
    });
    expect(existing.status).toBe(201);
    const fieldsOf = (input: { first_name: string; phone: string }) => {
      const checked = checkContactInput(input, 'AU');
      if (!checked.ok) throw new Error('invalid');
      return checked.fields;
    };
    const jobId = 'job_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const listed = async (phone: string) =>
      (await api('GET', `${contactsPath(t)}?q=${encodeURIComponent(phone)}`, { token: t.owner.token })).body
        .items as Json[];
    // Seen taken by the batch read: left to be merged.
    expect(
      await createImportedContacts(t.workspaceId, [
        { contactId: importedContactId(jobId, 1), fields: fieldsOf({ first_name: 'Clash', phone: taken }) },
      ]),
    ).toEqual(['taken']);
    // A condition refuses the write (here: the id is a contact's already, as when a row's contact
    // was written by another receive meanwhile): the whole transaction writes nothing.
    const outcomes = await createImportedContacts(t.workspaceId, [
      { contactId: importedContactId(jobId, 2), fields: fieldsOf({ first_name: 'Fresh', phone: fresh }) },
      { contactId: existing.body.id, fields: fieldsOf({ first_name: 'Twin', phone: uniqueMobile() }) },
    ]);
    expect(outcomes).toEqual(['refused', 'refused']);
    expect(await listed(fresh)).toEqual([]);
    // Written, then asked again (a chunk received twice): created, once.
    const once = [
      { contactId: importedContactId(jobId, 2), fields: fieldsOf({ first_name: 'Fresh', phone: fresh }) },
    ];
    expect(await createImportedContacts(t.workspaceId, once)).toEqual(['created']);
    expect(await createImportedContacts(t.workspaceId, once)).toEqual(['created']);
    expect((await listed(fresh)).map((c) => c.id)).toEqual([importedContactId(jobId, 2)]);
    // Its search entries (batch-written copies of the first, built by the entity) read back whole.
    const got = await api('GET', `${contactsPath(t)}/${importedContactId(jobId, 2)}`, {
      token: t.owner.token,
    });
    expect(await listed('fresh')).toEqual([got.body]);
    // Changed since, then asked again: its search entries stay those of the contact as it is.
    const patched = await api('PATCH', `${contactsPath(t)}/${importedContactId(jobId, 2)}`, {
      token: t.owner.token,
      body: { first_name: 'Renamed' },
    });
    expect(patched.status).toBe(200);
    expect(await createImportedContacts(t.workspaceId, once)).toEqual(['created']);
    expect(await listed('fresh')).toEqual([]);
    expect(await listed('renamed')).toEqual([patched.body]);
    expect(await listed(fresh)).toEqual([patched.body]);

    const job = await importFile(t, `first_name,phone\nNew,${uniqueMobile()}\nClash,${taken}\n`);
    expect(job.counts).toEqual({ total: 2, created: 1, merged: 1, rejected: 0 });
    expect((await listed(taken)).map((c) => c.id)).toEqual([existing.body.id]);
  });

  test('contact ids of imported rows: the ULID shape, the same for a row, different for rows and jobs', () => {
    const a = importedContactId('job_01JABCDEFGHJKMNPQRSTVWXYZ0', 1);
    expect(a).toMatch(/^ct_01JABCDEFG[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(importedContactId('job_01JABCDEFGHJKMNPQRSTVWXYZ0', 1)).toBe(a);
    expect(importedContactId('job_01JABCDEFGHJKMNPQRSTVWXYZ0', 2)).not.toBe(a);
    expect(importedContactId('job_01JABCDEFGHJKMNPQRSTVWXYZ1', 1)).not.toBe(a);
    expect(importedContactId('job_01JABCDEFGHJKMNPQRSTVWXYZ0', 2) > a).toBe(true);
  });
});
