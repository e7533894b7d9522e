import {
  ContactCallSummaryEntity,
  ContactEntity,
  ContactPhoneEntity,
} from '../../../functions/contacts/entities.js';
import { reindexContacts } from '../../../functions/contacts/list.js';
import { getContact } from '../../../functions/contacts/lookup.js';
import { newId } from '../../../functions/platform/ids.js';
import { queryStoredItems } from '../../../functions/platform/table.js';
import { sendMessage } from '../../../functions/platform/queue.js';
import { ActionRunEntity, readActionRun } from '../../../functions/post-call/entities.js';
import { getCallRecord } from '../../../functions/post-call/pipeline.js';
import { api, type Json } from '../../helpers/http.js';
import { requestsBetween, stackCounters, writesBetween } from '../../helpers/metrics.js';
import { readQuiescence, waitFor, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import { connectNumber, createAgent, newTenant, startCall, TO, ws, type Tenant } from './fixtures.js';

/**
 * A call's `contact_update` keeps the contact's calls in an item at the contact's own key
 * (functions/contacts/call-summary.ts): it writes its call summary, call link and note at
 * `WS#<ws>#CONTACT#<ct>` and nothing at the workspace's key `WS#<ws>` nor at its search key
 * `WS#<ws>#CONTACTSEARCH` (counted by the local stack per function and partition key between two
 * quiescent points), while the API shows the contact as before: `last_contacted_at` on the contact,
 * in the list and in a search. The count stays exact when the same call's action runs twice (its
 * worker gone after the contact's write) and when two calls' actions race; a contact written before
 * (its calls on the contact item, no summary) shows its `last_contacted_at` and continues its count.
 */

interface Setup {
  tenant: Tenant;
  agent: { id: string; post_call_actions: { id: string }[] };
}

async function setup(): Promise<Setup> {
  const tenant = await newTenant();
  const agent = (await createAgent(tenant, [{ type: 'contact_update', config: {} }])) as Setup['agent'];
  await connectNumber(tenant, agent.id);
  return { tenant, agent };
}

const contactsPath = (tenant: Tenant) => `${ws(tenant)}/contacts`;

/** The contact as the API shows it: by id, in the list, and found by `q`. */
async function shown(tenant: Tenant, contactId: string, q: string): Promise<Json[]> {
  const token = tenant.owner.token;
  const one = await api('GET', `${contactsPath(tenant)}/${contactId}`, { token });
  const list = await api('GET', contactsPath(tenant), { token });
  const search = await api('GET', `${contactsPath(tenant)}?q=${encodeURIComponent(q)}`, { token });
  expect([one.status, list.status, search.status]).toEqual([200, 200, 200]);
  const inList = (list.body.items as Json[]).filter((c) => c.id === contactId);
  const inSearch = (search.body.items as Json[]).filter((c) => c.id === contactId);
  expect([inList.length, inSearch.length]).toEqual([1, 1]);
  return [one.body, inList[0], inSearch[0]];
}

/** When a call counts as contacting: its end (as the post-call action reads it). */
async function calledAt(tenant: Tenant, callId: string): Promise<string> {
  const record = await waitFor(() => getCallRecord(tenant.workspaceId, callId), { what: 'the record' });
  return record.ended_at ?? record.created_at;
}

const callCountOf = async (tenant: Tenant, contactId: string) =>
  (await getContact(tenant.workspaceId, contactId, { withCalls: true }))?.callCount;

async function waitForCount(tenant: Tenant, contactId: string, count: number): Promise<void> {
  await waitFor(async () => ((await callCountOf(tenant, contactId)) === count ? true : undefined), {
    what: `the contact's call count to reach ${count}`,
    timeoutMs: 60_000,
  });
}

describe('a call on a contact', () => {
  it('writes nothing at the workspace key or its search key; the API shows last_contacted_at', async () => {
    const { tenant, agent } = await setup();
    const created = await api('POST', contactsPath(tenant), {
      token: tenant.owner.token,
      body: { first_name: 'Sam', last_name: 'Rivers', phone: TO.answered },
    });
    expect(created.status).toBe(201);
    const contactId = created.body.id as string;
    expect(created.body.last_contacted_at).toBeNull();
    const stored = await getContact(tenant.workspaceId, contactId);

    await waitForQuiescence();
    const before = await stackCounters();
    const callId = await startCall(tenant, agent.id, TO.answered);
    await waitForCount(tenant, contactId, 1);
    await waitForQuiescence();
    const after = await stackCounters();

    // The action ran once and counted the call.
    const { data: run } = await readActionRun(tenant.workspaceId, callId, agent.post_call_actions[0].id);
    expect({ state: run?.state, tries: run?.tries }).toEqual({ state: 'succeeded', tries: 1 });
    expect(JSON.parse(run!.result!)).toMatchObject({ contact_id: contactId, call_counted: true });
    // Its writes: the summary, the call link and the note at the contact's key, and only there among
    // the contacts' keys (the action's own run has a key of its own too).
    const written = writesBetween(before, after, 'RunPostCallAction');
    expect(written[`WS#${tenant.workspaceId}#CONTACT#${contactId}`]).toBe(3);
    expect(written[`WS#${tenant.workspaceId}`]).toBeUndefined();
    expect(written[`WS#${tenant.workspaceId}#CONTACTSEARCH`]).toBeUndefined();
    expect(Object.keys(written).filter((pk) => pk.startsWith(`WS#${tenant.workspaceId}#CONTACT`))).toEqual([
      `WS#${tenant.workspaceId}#CONTACT#${contactId}`,
    ]);
    // The contact item itself is as it was.
    expect(await getContact(tenant.workspaceId, contactId)).toEqual(stored);

    const at = await calledAt(tenant, callId);
    const views = await shown(tenant, contactId, 'rivers');
    expect(views.map((v) => v.last_contacted_at)).toEqual([at, at, at]);

    // What showing it costs: the caller's access (a TransactGetItems and a GetItem, as on every
    // workspace route), then the contact with its summary in one BatchGetItem (the contact alone was
    // one GetItem: no request more); a list or search page, its Query and one BatchGetItem of the
    // page's summaries (one request more).
    const token = tenant.owner.token;
    // (A GET is answered within its request, and only it runs ContactsApi meanwhile: no wait needed.)
    const cost = async (path: string) => {
      const start = await stackCounters();
      expect((await api('GET', path, { token })).status).toBe(200);
      return requestsBetween(start, await stackCounters(), 'ContactsApi');
    };
    const access = { TransactGetItems: 1, GetItem: 1 };
    expect(await cost(`${contactsPath(tenant)}/${contactId}`)).toEqual({ ...access, BatchGetItem: 1 });
    expect(await cost(contactsPath(tenant))).toEqual({ ...access, Query: 1, BatchGetItem: 1 });
    expect(await cost(`${contactsPath(tenant)}?q=rivers`)).toEqual({ ...access, Query: 1, BatchGetItem: 1 });
    expect(await getContact(tenant.workspaceId, contactId, { withCalls: true })).toMatchObject({
      callCount: 1,
      lastCallId: callId,
      lastCallAt: at,
    });

    // Deleting the contact deletes what its calls wrote at its key: the summary, the link, the note.
    const contactKey = {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `WS#${tenant.workspaceId}#CONTACT#${contactId}` },
      ConsistentRead: true,
    };
    expect((await queryStoredItems(contactKey)).items.map((i) => i.sk as string).sort()).toEqual([
      `CONTACTCALL#${callId}`,
      'CONTACTCALLS',
      expect.stringMatching(/^CONTACTNOTE#/),
    ]);
    expect((await api('DELETE', `${contactsPath(tenant)}/${contactId}`, { token })).status).toBe(204);
    expect((await queryStoredItems(contactKey)).items).toEqual([]);
  }, 180_000);

  it('counts a call once when its action runs again, and two racing calls exactly', async () => {
    const { tenant, agent } = await setup();
    const actionId = agent.post_call_actions[0].id;
    const first = await startCall(tenant, agent.id, TO.answered);
    const contactId = await waitFor(
      async () => {
        const { data: run } = await readActionRun(tenant.workspaceId, first, actionId);
        return run?.state === 'succeeded'
          ? (JSON.parse(run.result!) as { contact_id: string }).contact_id
          : undefined;
      },
      { what: 'the first call counted', timeoutMs: 60_000 },
    );
    expect(await callCountOf(tenant, contactId)).toBe(1);

    // The worker is gone after the contact's write, before the run's result: its claim lapses and the
    // message comes again, twice. The call is not counted again (its call link exists).
    await ActionRunEntity.patch({ workspaceId: tenant.workspaceId, callId: first, actionId })
      .set({
        state: 'running',
        claimToken: 'lost',
        claimExpiresAt: new Date(Date.now() - 1000).toISOString(),
      })
      .remove(['result', 'completedAt'])
      .go();
    const settled = await waitForQuiescence();
    const again = {
      type: 'post_call.action' as const,
      workspace_id: tenant.workspaceId,
      organisation_id: tenant.organisationId,
      call_id: first,
      action_id: actionId,
    };
    await Promise.all([sendMessage('postCallActions', again), sendMessage('postCallActions', again)]);
    await waitForConsumed(settled, { RunPostCallAction: 2 });
    const { data: rerun } = await readActionRun(tenant.workspaceId, first, actionId);
    expect(rerun?.state).toBe('succeeded');
    expect(JSON.parse(rerun!.result!)).toMatchObject({ contact_id: contactId, call_counted: false });
    expect(await callCountOf(tenant, contactId)).toBe(1);

    // Two calls at once: their actions race on the summary; both counted, once each.
    const before = await readQuiescence();
    const [second, third] = await Promise.all([
      startCall(tenant, agent.id, TO.answered),
      startCall(tenant, agent.id, TO.answered),
    ]);
    await waitForCount(tenant, contactId, 3);
    await waitForConsumed(before, { RunPostCallAction: 2 });
    await waitForQuiescence();
    expect(await callCountOf(tenant, contactId)).toBe(3);
    const latest = [
      { id: second, at: await calledAt(tenant, second) },
      { id: third, at: await calledAt(tenant, third) },
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))[1];
    const contact = await getContact(tenant.workspaceId, contactId, { withCalls: true });
    expect(contact?.lastContactedAt).toBe(latest.at);
    const { data: summary } = await ContactCallSummaryEntity.get({
      workspaceId: tenant.workspaceId,
      contactId,
    }).go();
    expect(summary?.callCount).toBe(3);
  }, 180_000);

  it('a contact written before (its calls on the contact item) shows them and continues its count', async () => {
    const { tenant, agent } = await setup();
    const contactId = newId('contact');
    const earlier = '2026-01-05T10:00:00.000Z';
    // As the post-call pipeline wrote it before: its calls on the contact item, no summary.
    await ContactEntity.create({
      workspaceId: tenant.workspaceId,
      contactId,
      firstName: 'Olive',
      lastName: 'Legacy',
      phone: TO.answered,
      source: 'Call',
      contactability: 'Contactable',
      callCount: 4,
      lastCallId: newId('call'),
      lastCallAt: earlier,
      lastContactedAt: earlier,
      createdAt: '2026-01-01T00:00:00.000Z',
    }).go();
    await ContactPhoneEntity.create({ workspaceId: tenant.workspaceId, phone: TO.answered, contactId }).go();
    // Searchable (search entries) as a contact written through the API is.
    await reindexContacts(tenant.workspaceId);
    const stored = await getContact(tenant.workspaceId, contactId);

    expect((await shown(tenant, contactId, 'olive')).map((v) => v.last_contacted_at)).toEqual([
      earlier,
      earlier,
      earlier,
    ]);

    const callId = await startCall(tenant, agent.id, TO.answered);
    await waitForCount(tenant, contactId, 5);
    await waitForQuiescence();
    const at = await calledAt(tenant, callId);
    expect((await shown(tenant, contactId, 'olive')).map((v) => v.last_contacted_at)).toEqual([at, at, at]);
    expect(await getContact(tenant.workspaceId, contactId, { withCalls: true })).toMatchObject({
      callCount: 5,
      lastCallId: callId,
    });
    // The contact item keeps what it had (the summary holds the calls now).
    expect(await getContact(tenant.workspaceId, contactId)).toEqual(stored);
  }, 180_000);
});
