import type { Page } from 'playwright-core';
import { receiveSms } from '../../lib/tools/cli/sms.js';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import { crmSimulator } from '../../lib/local/simulators/crm/client.js';
import type { StackState } from '../../lib/local/state.js';
import { api, baseUrl, type Json } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { tokenFor } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';
import { controlsBeyondReadOnly, DashboardBrowser, describeWithBrowser, settled } from './dashboard-kit.js';

/**
 * The dashboard's knowledge, integrations, evaluations, SMS and contact-notes pages in a real browser
 * (the system Chromium, driven by playwright-core) against the local stack's real API: an owner
 * works each page end to end, every page passes axe-core (no serious or critical violation) and is
 * photographed at 1280 and 390 px under .local/test-output/dashboard/, and a viewer finds no write
 * control on any of them.
 */
/** Until a knowledge base's search has answered: its results, or its empty or error state. */
const searched = (page: Page) =>
  waitFor(
    async () =>
      (await page.locator('[aria-label="Search"] [role="status"].state').count()) === 0 &&
      (await page.locator('[aria-label="Search results"], [aria-label="Search"] .state').count()) > 0,
    { what: 'the search to answer' },
  );

let sequence = Math.floor(Math.random() * 400_000);
/** A mobile number the simulators treat as ordinary (+61 491 57x xxx avoided). */
function uniqueMobile(): string {
  sequence += 1;
  return `+61493${String(sequence % 1_000_000).padStart(6, '0')}`;
}

describeWithBrowser('dashboard in Chromium: knowledge, integrations, evaluations, SMS, contact notes', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  /** The detail pages the owner's tests made, for the axe, screenshot and viewer passes. */
  const made: Record<string, string> = {};

  const ws = () => `/api/v1/workspaces/${demo.workspace_id}`;
  const get = async (path: string): Promise<Json> => {
    const res = await api('GET', `${ws()}${path}`, { token: demo.owner_token });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  beforeAll(async () => {
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    kit = await DashboardBrowser.launch('dashboard');
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
  });

  const signedIn = (email: string, width = 1280) => kit.signedIn(email, { width });
  const open = (page: Page, name: string) => kit.open(page, name);
  const shot = (page: Page, name: string) => kit.shot(page, name);

  it('knowledge: creates a listings base, uploads a listings CSV to done with its rejected row, and searches it', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Knowledge');
    await page.getByRole('button', { name: 'New knowledge base' }).click();
    // The API's 422 shows next to its field.
    await page.getByLabel('Knowledge base name').fill('x'.repeat(201));
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.locator('.field-error').first().waitFor();
    await expect(page.getByLabel('Knowledge base name').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByLabel('Knowledge base name').fill('Browser listings');
    await page.getByLabel('Kind').selectOption('listings');
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.getByRole('heading', { level: 1, name: 'Browser listings' }).waitFor();
    made.knowledge = new URL(page.url()).pathname;
    const kbId = made.knowledge.split('/').pop() ?? '';

    const csv =
      'external_id,address,suburb,state,postcode,price_text,status,bedrooms,bathrooms,description\n' +
      'BL-1,12 Lighthouse Rd,Manly,NSW,2095,"$1,250,000",available,3,2,"Ocean views, close to the ferry"\n' +
      'BL-2,4 Quarry Lane,Balmain,NSW,2041,$980k,under_offer,2,1,Terrace with a courtyard\n' +
      'BL-3,,Nowhere,NSW,2000,$1,available,1,1,A row without an address\n';
    await page
      .getByLabel('Listings CSV')
      .setInputFiles({ name: 'listings.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload listings' }).click();
    await page.locator('.import progress[value="100"]').waitFor({ timeout: 60_000 });
    await expect(page.locator('.import [role="status"]').textContent()).resolves.toMatch(
      /completed: 100 % — 2 created, 1 rejected/,
    );
    await page.getByText(/Rejected rows \(1\)/).waitFor();
    await expect(page.locator('.import li').textContent()).resolves.toMatch(/^Row 3: address/);
    await page.getByRole('cell', { name: '12 Lighthouse Rd, Manly NSW 2095' }).waitFor();
    const items = await get(`/knowledge-bases/${kbId}/items`);
    expect(items.items.map((item: Json) => item.external_id).sort()).toEqual(['BL-1', 'BL-2']);

    // The search index follows writes within moments: search again until the listing is found.
    await page.getByLabel('Search this knowledge base').fill('ferry ocean');
    const results = page.getByRole('list', { name: 'Search results' });
    await waitFor(
      async () => {
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await searched(page);
        return (await results.count()) > 0;
      },
      { what: 'the search to find the listing', intervalMs: 500, timeoutMs: 60_000 },
    );
    await expect(results.locator('li').first().textContent()).resolves.toContain('12 Lighthouse Rd');
    await shot(page, 'knowledge-detail-1280');
    await context.close();
  }, 120_000);

  it('knowledge: uploads a document file to a documents base, watches it become ready, and finds its passage', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Knowledge');
    await page.getByRole('button', { name: 'New knowledge base' }).click();
    await page.getByLabel('Knowledge base name').fill('Browser documents');
    await page.getByLabel('Kind').selectOption('documents');
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.getByRole('heading', { level: 1, name: 'Browser documents' }).waitFor();
    made.documents = new URL(page.url()).pathname;
    const kbId = made.documents.split('/').pop() ?? '';

    await page.getByRole('button', { name: 'Add document' }).click();
    await page.getByLabel('Title').fill('Strata report');
    const text = 'The strata levy for 12 Lighthouse Rd is $1,200 a quarter, and the sinking fund is healthy.';
    await page
      .getByLabel('Document file')
      .setInputFiles({ name: 'strata.txt', mimeType: 'text/plain', buffer: Buffer.from(text) });
    await page.getByRole('button', { name: 'Save document' }).click();
    const row = page.locator('tr', { has: page.getByRole('cell', { name: 'Strata report' }) });
    await row.waitFor();
    await row.getByRole('cell', { name: 'ready' }).waitFor({ timeout: 60_000 });
    const items = await get(`/knowledge-bases/${kbId}/items`);
    expect(items.items.map((item: Json) => [item.title, item.status, item.file_name])).toEqual([
      ['Strata report', 'ready', 'strata.txt'],
    ]);

    await page.getByLabel('Search this knowledge base').fill('strata levy');
    const results = page.getByRole('list', { name: 'Search results' });
    await waitFor(
      async () => {
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await searched(page);
        return (await results.count()) > 0;
      },
      { what: 'the search to find the document', intervalMs: 500, timeoutMs: 60_000 },
    );
    await expect(results.locator('li').first().textContent()).resolves.toContain('$1,200 a quarter');
    await shot(page, 'knowledge-documents-1280');
    await context.close();
  }, 120_000);

  it('integrations: creates a demo CRM integration, connects it, syncs now to done, then disconnects', async () => {
    const account = `browser${Date.now()}`;
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Integrations');
    await page.getByRole('button', { name: 'New integration' }).click();
    await page.getByLabel('CRM').selectOption('demo_crm');
    await page.getByLabel('Integration name').fill('Browser CRM');
    await page.getByLabel('Account').fill(account);
    await page.getByRole('button', { name: 'Create integration' }).click();
    await page.getByRole('heading', { level: 1, name: 'Browser CRM' }).waitFor();
    made.integration = new URL(page.url()).pathname;
    const integrationId = made.integration.split('/').pop() ?? '';
    const status = page.getByRole('status', { name: 'Integration status' });

    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await status.filter({ hasText: /^connected$/ }).waitFor();
    const syncNow = page.getByRole('button', { name: 'Sync now' });
    // Enabled again once the first (initial) sync has finished.
    await page.locator('button:has-text("Sync now"):not([disabled])').waitFor({ timeout: 60_000 });
    await page.getByRole('cell', { name: 'connect (initial)' }).waitFor();

    // A change in the CRM for the next sync to bring.
    const crm = crmSimulator(stackState().env.CRM_SIMULATOR_URL as string, account);
    await crm.putListing({ external_id: 'BR-NEW', address: '9 Browser St', status: 'available' });
    await syncNow.click();
    await page.getByRole('cell', { name: 'sync (incremental)' }).waitFor({ timeout: 30_000 });
    const syncRow = page.locator('tr', { has: page.getByRole('cell', { name: 'sync (incremental)' }) });
    await syncRow.getByRole('cell', { name: 'completed' }).waitFor({ timeout: 60_000 });
    await expect(syncRow.locator('td[data-label="Outcome"]').textContent()).resolves.toMatch(
      /1 listings \(1 new\)/,
    );
    const jobs = await get(`/integrations/${integrationId}/jobs`);
    expect(jobs.items.filter((job: Json) => job.trigger === 'sync')).toHaveLength(1);
    expect(jobs.items.filter((job: Json) => job.trigger === 'connect')).toHaveLength(1);
    expect(jobs.items.every((job: Json) => job.status === 'completed')).toBe(true);
    await shot(page, 'integration-detail-1280');

    await page.getByRole('button', { name: 'Disconnect' }).click();
    await status.filter({ hasText: /^disconnected$/ }).waitFor();
    await expect(get(`/integrations/${integrationId}`).then((i) => i.status)).resolves.toBe('disconnected');
    await context.close();
  }, 150_000);

  it('evaluations: runs a scenario, watches it finish, and shows each criterion with its verdict and reason', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Evaluations');
    await page.getByLabel('Agent').selectOption(demo.agent_id);
    await page.getByRole('button', { name: 'New evaluation' }).click();
    // The API's 422 entries show next to the fields they name: a caller line too long (an item of the
    // list, under the list's field), then neither expected phrases nor criteria.
    await page.getByLabel('Scenario name').fill('Parking');
    await page.getByLabel('Caller lines').fill(`Is there parking nearby?\n${'x'.repeat(501)}`);
    await page.getByLabel('Criteria').fill('tells the caller about parking\noffers an inspection time');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await page.locator('.field-error').first().waitFor();
    await expect(page.getByLabel('Caller lines').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Criteria').getAttribute('aria-invalid')).resolves.toBeNull();

    await page.getByLabel('Caller lines').fill('Is there parking nearby?');
    await page.getByLabel('Criteria').fill('');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await page.getByLabel('Expected phrases').and(page.locator('[aria-invalid="true"]')).waitFor();
    await expect(page.getByLabel('Caller lines').getAttribute('aria-invalid')).resolves.toBeNull();

    await page.getByLabel('Criteria').fill('tells the caller about parking\noffers an inspection time');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await page.waitForURL(/\/evaluations\/ag_[^/]+\/evl_/);
    made.evaluation = new URL(page.url()).pathname;
    await page
      .getByRole('status', { name: 'Evaluation status' })
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 60_000 });
    const result = page.getByRole('article', { name: 'Scenario Parking' });
    await result.waitFor();
    const evaluation = await get(`/agents/${demo.agent_id}/evaluations/${made.evaluation.split('/').pop()}`);
    expect(evaluation.results).toHaveLength(1);
    const criteria = evaluation.results[0].criteria as {
      criterion: string;
      passed: boolean;
      reason: string;
    }[];
    expect(criteria).toHaveLength(2);
    const shown = result.locator('.criteria li');
    await expect(shown.count()).resolves.toBe(2);
    for (const [index, criterion] of criteria.entries()) {
      const text = (await shown.nth(index).textContent()) ?? '';
      expect(criterion.reason.length).toBeGreaterThan(0);
      expect(text).toContain(criterion.reason);
      expect(text).toContain(criterion.criterion);
      expect(text.startsWith(criterion.passed ? 'Met' : 'Not met')).toBe(true);
    }
    await expect(result.locator('.badge').textContent()).resolves.toBe(
      evaluation.results[0].passed ? 'Passed' : 'Failed',
    );
    await shot(page, 'evaluation-detail-1280');
    await context.close();
  }, 120_000);

  it('SMS: sends an SMS, sees the reply in the thread and replies; runs an SMS campaign; compares two', async () => {
    const phone = uniqueMobile();
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'SMS');
    await page.getByLabel('To phone').fill(phone);
    await page.getByLabel('Message', { exact: true }).fill('Hi, the open home is on Saturday at 10am.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText(/^Sent \(1 segment, 5 credits\)/).waitFor();

    // The contact answers, through the SMS simulator and our signed webhook (as `sms receive` does).
    const inbound = await receiveSms(stackState() as unknown as StackState, {
      from: phone,
      to: demo.phone_number,
      body: 'Great, can I bring my partner?',
    });
    expect(inbound.http_status).toBe(200);
    const thread = page.getByRole('link', { name: phone });
    await thread.waitFor({ timeout: 30_000 });
    await thread.click();
    await page.getByRole('cell', { name: 'Great, can I bring my partner?' }).waitFor();
    made.thread = new URL(page.url()).pathname;
    const contactId = made.thread.split('/').pop() ?? '';
    await page.getByLabel('Reply', { exact: true }).fill('Of course, see you both then.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.getByRole('cell', { name: 'Of course, see you both then.' }).waitFor();
    const messages = await get(`/sms-inbox/${contactId}`);
    expect(messages.items.map((m: Json) => [m.direction, m.body])).toEqual([
      ['outbound', 'Of course, see you both then.'],
      ['inbound', 'Great, can I bring my partner?'],
      ['outbound', 'Hi, the open home is on Saturday at 10am.'],
    ]);
    await shot(page, 'sms-thread-1280');

    // An SMS campaign to the contact's tag: created, started, its progress to sent.
    const tag = `browser${Date.now()}`;
    const tagged = await api('PATCH', `${ws()}/contacts/${contactId}`, {
      token: demo.owner_token,
      body: { tags: [tag] },
    });
    expect(tagged.status).toBe(200);
    await open(page, 'SMS');
    await page.getByRole('button', { name: 'New SMS campaign' }).click();
    await page.getByLabel('Campaign name').fill('Browser SMS campaign');
    await page.getByLabel('Campaign message').fill('Hi {{first_name}}, new listings this week.');
    await page.getByLabel('Audience').selectOption('tag');
    await page.getByLabel('Tag', { exact: true }).fill(tag);
    await page.getByRole('button', { name: 'Create SMS campaign' }).click();
    await page.getByRole('heading', { level: 1, name: 'Browser SMS campaign' }).waitFor();
    made.smsCampaign = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Start sending' }).click();
    await page
      .getByRole('status', { name: 'SMS campaign status' })
      .filter({ hasText: /^sent$/ })
      .waitFor({ timeout: 60_000 });
    await page.locator('progress[value="100"]').waitFor();
    const campaignId = made.smsCampaign.split('/').pop() ?? '';
    await expect(get(`/sms-campaigns/${campaignId}`)).resolves.toMatchObject({ recipients: 1, sent: 1 });
    await shot(page, 'sms-campaign-1280');

    // A second campaign (a draft) and the comparison of the two.
    const second = await api('POST', `${ws()}/sms-campaigns`, {
      token: demo.owner_token,
      body: { name: 'Browser draft campaign', body: 'Hello', audience: { tag } },
    });
    expect(second.status).toBe(201);
    await open(page, 'SMS');
    await page.getByRole('checkbox', { name: 'Compare Browser SMS campaign' }).check();
    await page.getByRole('checkbox', { name: 'Compare Browser draft campaign' }).check();
    await page.getByRole('button', { name: 'Compare selected (2)' }).click();
    const comparison = page.getByRole('table', { name: 'Campaign comparison' });
    await comparison.waitFor();
    await expect(comparison.locator('tbody tr').count()).resolves.toBe(2);
    await expect(comparison.locator('tbody tr').first().locator('td').first().textContent()).resolves.toBe(
      'Browser SMS campaign',
    );
    await shot(page, 'sms-compare-1280');
    await context.close();
  }, 150_000);

  it("contacts: a contact's notes: a 422 next to the field, then a note added once", async () => {
    const created = await api('POST', `${ws()}/contacts`, {
      token: demo.owner_token,
      body: { first_name: 'Nora', last_name: 'Notes', phone: uniqueMobile() },
    });
    expect(created.status).toBe(201);
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Contacts');
    await page.getByRole('searchbox', { name: 'Search contacts' }).fill('Nora');
    await page.getByRole('searchbox', { name: 'Search contacts' }).press('Enter');
    await page.getByRole('link', { name: 'Nora Notes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Nora Notes' }).waitFor();
    made.contact = new URL(page.url()).pathname;
    await settled(page);
    await page.getByText('No notes yet.').waitFor();

    await page.getByLabel('Note', { exact: true }).fill('x'.repeat(501));
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.locator('.field-error').first().waitFor();
    await expect(page.getByLabel('Note', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');

    await page.getByLabel('Note', { exact: true }).fill('Prefers a call after 5pm.');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByRole('cell', { name: 'Prefers a call after 5pm.' }).waitFor();
    await expect(page.getByLabel('Note', { exact: true }).inputValue()).resolves.toBe('');
    const notes = await get(`/contacts/${created.body.id}/notes`);
    expect(notes.items.map((note: Json) => note.text)).toEqual(['Prefers a call after 5pm.']);
    await shot(page, 'contact-detail-1280');
    await context.close();
  }, 90_000);

  it('every new page passes axe and is photographed at 1280 and 390 px', async () => {
    const pages: [name: string, path: string][] = [
      ['knowledge', '/knowledge'],
      ['integrations', '/integrations'],
      ['evaluations', '/evaluations'],
      ['sms', '/sms'],
      ...Object.entries(made).map(([name, path]): [string, string] => [`${name}-page`, path]),
    ];
    expect(Object.keys(made).sort()).toEqual([
      'contact',
      'documents',
      'evaluation',
      'integration',
      'knowledge',
      'smsCampaign',
      'thread',
    ]);
    for (const width of [1280, 390]) {
      const { context, page } = await signedIn(demo.owner_email, width);
      for (const [name, path] of pages) {
        await page.goto(`${baseUrl()}${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await kit.checkPage(page, path, `${name}-${width}`, { axe: width === 1280 });
      }
      await context.close();
    }
    expect(kit.cspViolations).toEqual([]);
  }, 180_000);

  it('a viewer finds no write control on these pages', async () => {
    const email = `viewer-a-${Date.now()}@example.com`;
    const invited = await api('POST', `/api/v1/organisations/${demo.organisation_id}/invitations`, {
      token: demo.owner_token,
      body: { email, role: 'regular', workspaces: [{ workspace_id: demo.workspace_id, role: 'viewer' }] },
    });
    expect(invited.status).toBe(201);
    const accepted = await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, {
      token: await tokenFor(email),
    });
    expect(accepted.status).toBe(200);

    const { context, page } = await signedIn(email);
    const seen: Record<string, string[]> = {};
    for (const path of ['/knowledge', '/integrations', '/evaluations', '/sms', ...Object.values(made)]) {
      await page.goto(`${baseUrl()}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await settled(page);
      await expect(page.locator('main [role="alert"]').count()).resolves.toBe(0);
      seen[path] = await controlsBeyondReadOnly(page);
    }
    expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((path) => [path, []])));
    // The viewer still reads: the thread's messages and the knowledge base's listings are there.
    await page.goto(`${baseUrl()}${made.thread}`);
    await page.getByRole('cell', { name: 'Great, can I bring my partner?' }).waitFor();
    await shot(page, 'viewer-sms-thread-1280');
    await context.close();
  }, 120_000);
});
