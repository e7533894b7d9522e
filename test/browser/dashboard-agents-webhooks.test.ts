import type { Page } from 'playwright-core';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, baseUrl } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { tokenFor } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';
import { emailsTo, uniqueEmail } from '../e2e/access/fixtures.js';
import { startReceiver, type Receiver } from '../e2e/post-call/fixtures.js';
import {
  controlsBeyondReadOnly,
  DashboardBrowser,
  describeWithBrowser,
  seriousAxeViolations,
  settled,
} from './dashboard-kit.js';

/**
 * The dashboard's agent editing, call detail (analysis, tool calls, latency), webhook endpoints and
 * invitation page in the system Chromium against the local stack's real API: an owner edits and
 * reloads, a bad value shows the API's 422 next to its field, a call's detail shows what the API
 * holds, an endpoint gets a delivery and resends it, an invitee accepts through the e-mail's link
 * and lands in the organisation, and a viewer finds no write control. axe-core on each page;
 * screenshots at 1280 and 390 px under .local/test-output/dashboard-agents-webhooks/.
 */
interface Call {
  id: string;
  status: string;
  analysis: { summary: string; call_successful: boolean; custom: Record<string, unknown> } | null;
  tool_calls: { name: string; ok: boolean }[];
  latency: { turns: number; total_ms: { p50: number | null; p90: number | null } };
}

describeWithBrowser('dashboard in Chromium: agent editing, call detail, webhooks, invitations', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  let agentId: string;
  let knowledgeBaseId: string;
  let callId: string;
  let receiver: Receiver;
  const agentPath = () => `/api/v1/workspaces/${demo.workspace_id}/agents/${agentId}`;
  const owner = () => ({ token: demo.owner_token });

  beforeAll(async () => {
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    receiver = await startReceiver(() => ({ status: 200, body: 'ok' }));
    const agent = await api('POST', `/api/v1/workspaces/${demo.workspace_id}/agents`, {
      ...owner(),
      body: { name: 'Agent edited in the browser', prompt: 'Help {{name}} with listings.' },
    });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
    const base = await api('POST', `/api/v1/workspaces/${demo.workspace_id}/knowledge-bases`, {
      ...owner(),
      body: { name: 'Harbour listings', kind: 'listings' },
    });
    expect(base.status).toBe(201);
    knowledgeBaseId = base.body.id;
    kit = await DashboardBrowser.launch('dashboard-agents-webhooks');
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
    await receiver?.stop();
  });

  /** Signs in on the local identity provider's page, starting at `path`. */
  const signedIn = (email: string, path = '/agents') => kit.signedIn(email, { path });

  /** axe-core finds no serious violation, and the page is photographed at 1280 and 390 px. */
  async function checkAndPhotograph(page: Page, name: string): Promise<void> {
    await settled(page);
    expect({ page: name, violations: await seriousAxeViolations(page) }).toEqual({
      page: name,
      violations: [],
    });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await kit.shot(page, `${name}-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  const fieldError = (page: Page, label: string) =>
    page
      .locator('.field')
      .filter({ has: page.getByLabel(label, { exact: true }) })
      .locator('.field-error');

  it('edits an agent: voice, language, transfer number, knowledge base, analysis field, post-call action; saved across a reload', async () => {
    const { context, page } = await signedIn(demo.owner_email, `/agents/${agentId}`);
    await page.getByRole('heading', { level: 1, name: 'Agent edited in the browser' }).waitFor();
    await settled(page);
    await page.getByLabel('Voice', { exact: true }).fill('aria.edited');
    await page.getByLabel('Language', { exact: true }).fill('en-GB');
    await page.getByLabel('Transfer number').fill('+61291234567');
    await page.getByLabel('Harbour listings').check();
    await page.getByLabel('Success criteria').fill('The caller booked an inspection');
    await page.getByRole('button', { name: 'Add field' }).click();
    const field = page.getByRole('group', { name: 'Analysis field 1' });
    await field.getByLabel('Field name').fill('budget');
    await field.getByLabel('Field type').selectOption('number');
    await field.getByLabel('Field description').fill('The budget the caller named, in dollars');
    await page.getByLabel('New action type').selectOption('webhook');
    await page.getByRole('button', { name: 'Add action' }).click();
    await page
      .getByRole('group', { name: 'Webhook (action 1)' })
      .getByLabel('Webhook URL')
      .fill(receiver.url);
    await page.getByLabel('New action type').selectOption('sms_owner');
    await page.getByRole('button', { name: 'Add action' }).click();
    const sms = page.getByRole('group', { name: 'SMS to the owner (action 2)' });
    await sms.getByLabel('Owner mobile').fill('+61491570159');
    await sms.getByLabel('Enabled').uncheck();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();

    const saved = (await api('GET', agentPath(), owner())).body;
    expect(saved).toMatchObject({
      voice: 'aria.edited',
      language: 'en-GB',
      transfer_phone_number: '+61291234567',
      knowledge_base_ids: [knowledgeBaseId],
      success_criteria: 'The caller booked an inspection',
      analysis_fields: [
        { name: 'budget', type: 'number', description: 'The budget the caller named, in dollars' },
      ],
    });
    expect(saved.post_call_actions).toEqual([
      expect.objectContaining({ type: 'webhook', enabled: true, config: { url: receiver.url } }),
      expect.objectContaining({ type: 'sms_owner', enabled: false, config: { to: '+61491570159' } }),
    ]);

    // A second save keeps the two actions (their ids were taken in): no duplicates. It changes
    // nothing, so it makes no new version and leaves updated_at: wait for its PATCH's answer instead.
    const secondSave = page.waitForResponse(
      (response) => response.request().method() === 'PATCH' && response.url().endsWith(agentPath()),
    );
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    expect((await secondSave).status()).toBe(200);
    const again = (await api('GET', agentPath(), owner())).body;
    expect(again.post_call_actions.map((a: { id: string }) => a.id)).toEqual(
      saved.post_call_actions.map((a: { id: string }) => a.id),
    );

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Agent edited in the browser' }).waitFor();
    await settled(page);
    await expect(page.getByLabel('Voice', { exact: true }).inputValue()).resolves.toBe('aria.edited');
    await expect(page.getByLabel('Language', { exact: true }).inputValue()).resolves.toBe('en-GB');
    await expect(page.getByLabel('Transfer number').inputValue()).resolves.toBe('+61291234567');
    await expect(page.getByLabel('Harbour listings').isChecked()).resolves.toBe(true);
    await expect(
      page.getByRole('group', { name: 'Analysis field 1' }).getByLabel('Field name').inputValue(),
    ).resolves.toBe('budget');
    await expect(
      page.getByRole('group', { name: 'Webhook (action 1)' }).getByLabel('Webhook URL').inputValue(),
    ).resolves.toBe(receiver.url);
    await expect(
      page.getByRole('group', { name: 'SMS to the owner (action 2)' }).getByLabel('Enabled').isChecked(),
    ).resolves.toBe(false);

    // The saved webhook action sends a test payload, once.
    const before = receiver.requests.length;
    await page.getByRole('button', { name: 'Send test payload (action 1)' }).click();
    await page.getByRole('status').filter({ hasText: 'Test payload sent: HTTP 200.' }).waitFor();
    expect(receiver.requests.length).toBe(before + 1);
    expect(JSON.parse(receiver.requests[before].body).type).toBe('webhook.test');

    // Removing the SMS action and saving leaves the webhook one.
    await page.getByRole('button', { name: 'Remove SMS to the owner (action 2)' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await waitFor(async () => (await api('GET', agentPath(), owner())).body.post_call_actions.length === 1, {
      what: 'the SMS action to be removed',
    });
    await checkAndPhotograph(page, 'agent-editing');
    await context.close();
  }, 120_000);

  it('a bad value: the API 422 shows next to its field, and nothing changes', async () => {
    const { context, page } = await signedIn(demo.owner_email, `/agents/${agentId}`);
    await page.getByRole('heading', { level: 1, name: 'Agent edited in the browser' }).waitFor();
    await settled(page);
    const before = (await api('GET', agentPath(), owner())).body;
    await page.getByLabel('Transfer number').fill('0291234567');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByRole('group', { name: 'Analysis field 2' }).getByLabel('Field name').fill('Bad Name');
    await page.getByRole('group', { name: 'Analysis field 2' }).getByLabel('Field description').fill('x');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await fieldError(page, 'Transfer number').waitFor();
    await expect(fieldError(page, 'Transfer number').textContent()).resolves.toContain('E.164');
    await expect(page.getByLabel('Transfer number').getAttribute('aria-invalid')).resolves.toBe('true');
    const nameError = page
      .getByRole('group', { name: 'Analysis field 2' })
      .locator('.field')
      .filter({ hasText: 'Field name' })
      .locator('.field-error');
    await expect(nameError.textContent()).resolves.toContain('lower-case');
    await page.locator('form[aria-label="Agent settings"] .form-error').waitFor();
    const after = (await api('GET', agentPath(), owner())).body;
    expect(after.transfer_phone_number).toBe('+61291234567');
    expect(after.updated_at).toBe(before.updated_at);
    await checkAndPhotograph(page, 'agent-422');
    await context.close();
  }, 60_000);

  it('a call placed from the agent page shows its analysis, tool calls and latency', async () => {
    const { context, page } = await signedIn(demo.owner_email, `/agents/${demo.agent_id}`);
    await page.getByLabel('To phone').fill('+61491570156');
    await page.getByRole('button', { name: 'Start call' }).click();
    await page.waitForURL(/\/calls\/call_/);
    callId = new URL(page.url()).pathname.split('/').pop() as string;
    await page
      .getByRole('status', { name: 'Call status' })
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 60_000 });
    const call = await waitFor(
      async () => {
        const found = await api('GET', `/api/v1/workspaces/${demo.workspace_id}/calls/${callId}`, owner());
        return found.body.analysis ? (found.body as Call) : undefined;
      },
      { what: 'the call analysis', timeoutMs: 60_000 },
    );
    const analysis = page.getByRole('region', { name: 'Analysis' });
    await analysis.getByText(call.analysis!.summary, { exact: true }).waitFor({ timeout: 30_000 });
    await expect(analysis.locator('dt', { hasText: 'Successful' }).count()).resolves.toBe(1);

    // The demo caller says goodbye: the agent ends the call with its end_call tool.
    const tools = page.getByRole('region', { name: 'Tool calls' });
    expect(call.tool_calls.length).toBeGreaterThan(0);
    await expect(tools.locator('tbody tr').count()).resolves.toBe(call.tool_calls.length);
    await expect(tools.locator('tbody tr').first().locator('td').first().textContent()).resolves.toBe(
      call.tool_calls[0].name,
    );
    await expect(tools.locator('tbody tr').first().locator('td').nth(2).textContent()).resolves.toEqual(
      call.tool_calls[0].ok ? 'ok' : expect.stringMatching(/^failed/),
    );

    const latency = page.getByRole('region', { name: 'Latency' });
    expect(call.latency.turns).toBeGreaterThan(0);
    await latency.getByText(`Over ${call.latency.turns} turns`).waitFor();
    const totalRow = latency.locator('tbody tr').first();
    await expect(totalRow.locator('td').nth(1).textContent()).resolves.toBe(
      call.latency.total_ms.p50 === null ? '—' : `${call.latency.total_ms.p50} ms`,
    );
    await page.getByText('Ended by').waitFor();

    // The demo agent's post-call webhook (to the demo receiver) is listed once it went out; Resend sends it again.
    const deliveriesPath = `/api/v1/workspaces/${demo.workspace_id}/webhook-deliveries?call_id=${callId}`;
    await waitFor(
      async () => (await api('GET', deliveriesPath, owner())).body.items?.[0]?.state === 'succeeded',
      { what: "the call's post-call webhook delivery", timeoutMs: 60_000 },
    );
    const deliveries = page.getByRole('region', { name: 'Webhook deliveries' });
    const delivery = deliveries.locator('tbody tr').filter({ hasText: 'succeeded' });
    await delivery.waitFor({ timeout: 30_000 });
    await expect(delivery.count()).resolves.toBe(1);
    await delivery.getByRole('button', { name: 'Resend' }).click();
    await delivery.locator('td[data-label="Attempts"]', { hasText: /^2$/ }).waitFor({ timeout: 30_000 });
    const resent = (await api('GET', deliveriesPath, owner())).body.items;
    expect(resent).toHaveLength(1);
    expect(resent[0].attempts).toHaveLength(2);
    await checkAndPhotograph(page, 'call-detail-analysis');
    await context.close();
  }, 150_000);

  it('adds a webhook endpoint, sees its delivery, resends it; edits and deletes endpoints', async () => {
    const { context, page } = await signedIn(demo.owner_email, '/webhooks');
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await settled(page);
    // A bad URL: the 422 next to the field, nothing made.
    await page.getByRole('button', { name: 'New endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await fieldError(page, 'Endpoint URL').waitFor();
    const endpoints = () => api('GET', `/api/v1/workspaces/${demo.workspace_id}/webhook-endpoints`, owner());
    expect((await endpoints()).body.items).toEqual([]);

    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('A contact was created').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const card = page.getByRole('listitem', { name: `Endpoint ${receiver.url}`, exact: true });
    await card.waitFor();
    const [endpoint] = (await endpoints()).body.items;
    expect(endpoint).toMatchObject({ url: receiver.url, enabled: true });
    expect([...endpoint.event_types].sort()).toEqual(['call.ended', 'contact.created']);

    // A second endpoint, for listing.sold only: none of the contact's deliveries are listed under it.
    const other = `${receiver.url}-other`;
    await page.getByRole('button', { name: 'New endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill(other);
    await page.getByLabel('A call ended').uncheck();
    await page.getByLabel('A listing sold').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const otherCard = page.getByRole('listitem', { name: `Endpoint ${other}`, exact: true });
    await otherCard.waitFor();

    const before = receiver.requests.length;
    const contact = await api('POST', `/api/v1/workspaces/${demo.workspace_id}/contacts`, {
      ...owner(),
      body: { first_name: 'Hook', last_name: 'Test', phone: '+61491570191' },
    });
    expect(contact.status).toBe(201);
    await card.getByRole('button', { name: 'Show deliveries' }).click();
    const row = card.locator('tbody tr').filter({ hasText: 'contact.created' });
    await row.filter({ hasText: 'succeeded' }).waitFor({ timeout: 30_000 });
    await expect(row.count()).resolves.toBe(1);
    await expect(row.locator('td[data-label="Response"]').textContent()).resolves.toBe('HTTP 200');
    await expect(row.locator('td[data-label="Attempts"]').textContent()).resolves.toBe('1');
    await otherCard.getByRole('button', { name: 'Show deliveries' }).click();
    await otherCard.getByText('No deliveries to this endpoint yet.').waitFor();
    const delivered = receiver.requests.slice(before).filter((r) => r.body.includes('contact.created'));
    expect(delivered).toHaveLength(1);

    await row.getByRole('button', { name: 'Resend' }).click();
    await row.locator('td[data-label="Attempts"]', { hasText: /^2$/ }).waitFor({ timeout: 30_000 });
    const resent = receiver.requests.slice(before).filter((r) => r.body.includes('contact.created'));
    expect(resent).toHaveLength(2);
    expect(resent[1].headers['webhook-id']).toBe(resent[0].headers['webhook-id']);

    // Edit: off, and its events changed.
    await card.getByRole('button', { name: `Edit ${receiver.url}` }).click();
    const form = page.getByRole('form', { name: `Edit endpoint ${receiver.url}` });
    await form.getByLabel('Enabled').uncheck();
    await form.getByRole('button', { name: 'Save endpoint' }).click();
    await card.getByText('disabled', { exact: true }).waitFor();
    expect((await endpoints()).body.items.find((e: { id: string }) => e.id === endpoint.id).enabled).toBe(
      false,
    );
    // Delete the other one.
    await otherCard.getByRole('button', { name: `Delete ${other}` }).click();
    await otherCard.waitFor({ state: 'detached' });
    expect((await endpoints()).body.items.map((e: { url: string }) => e.url)).toEqual([receiver.url]);

    // The signing secret: shown, then rotated.
    await page.getByRole('button', { name: 'Show secret' }).click();
    const secret = page.getByLabel('Webhook signing secret');
    await secret.waitFor();
    const first = await secret.inputValue();
    expect(first).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await waitFor(async () => (await secret.inputValue()) !== first, { what: 'the rotated secret' });
    await checkAndPhotograph(page, 'webhooks');
    await context.close();
  }, 120_000);

  it('an invitee opens the e-mail link, signs in, accepts and lands in the organisation', async () => {
    const email = uniqueEmail('invitee');
    const invited = await api('POST', `/api/v1/organisations/${demo.organisation_id}/invitations`, {
      ...owner(),
      body: { email, role: 'regular', workspaces: [{ workspace_id: demo.workspace_id, role: 'member' }] },
    });
    expect(invited.status).toBe(201);
    const invitationId = invited.body.invitation_id as string;
    const [sent] = emailsTo(email);
    const link = sent.text.match(/https?:\/\/\S+/)?.[0] as string;
    expect(link).toBe(`${baseUrl()}/invitations/${invitationId}`);

    // Someone else signed in: told so, and nothing is accepted.
    const stranger = await signedIn(uniqueEmail('stranger'), new URL(link).pathname);
    await stranger.page.getByRole('heading', { level: 1, name: 'Accept your invitation' }).waitFor();
    await settled(stranger.page);
    await stranger.page.getByText(/No pending invitation here for/).waitFor();
    await expect(stranger.page.getByRole('button', { name: 'Accept invitation' }).count()).resolves.toBe(0);
    await stranger.context.close();

    const { context, page } = await signedIn(email, new URL(link).pathname);
    await page.getByRole('heading', { level: 1, name: 'Accept your invitation' }).waitFor();
    await settled(page);
    await page.getByRole('button', { name: 'Accept invitation' }).waitFor();
    await checkAndPhotograph(page, 'invitation');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.waitForURL(/\/agents$/);
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await expect(page.getByRole('combobox', { name: 'Organisation' }).inputValue()).resolves.toBe(
      demo.organisation_id,
    );
    await expect(page.getByRole('combobox', { name: 'Workspace' }).inputValue()).resolves.toBe(
      demo.workspace_id,
    );
    const members = await api('GET', `/api/v1/organisations/${demo.organisation_id}/members`, owner());
    expect(members.body.items.filter((m: { email: string }) => m.email === email)).toEqual([
      expect.objectContaining({ status: 'accepted', role: 'regular' }),
    ]);
    // The link again: nothing pending any more.
    await page.goto(link);
    await page.getByText(/No pending invitation here for/).waitFor();
    await context.close();
  }, 90_000);

  it('a viewer finds no write control on the agent, call detail and webhooks pages', async () => {
    const email = uniqueEmail('viewer');
    const invited = await api('POST', `/api/v1/organisations/${demo.organisation_id}/invitations`, {
      ...owner(),
      body: { email, role: 'regular', workspaces: [{ workspace_id: demo.workspace_id, role: 'viewer' }] },
    });
    expect(invited.status).toBe(201);
    const accepted = await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, {
      token: await tokenFor(email),
    });
    expect(accepted.status).toBe(200);

    const { context, page } = await signedIn(email, `/agents/${agentId}`);
    const seen: Record<string, string[]> = {};
    for (const [name, path] of [
      ['Agent', `/agents/${agentId}`],
      ['Call detail', `/calls/${callId}`],
      ['Webhooks', '/webhooks'],
    ]) {
      await page.goto(`${baseUrl()}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await settled(page);
      // Each endpoint's deliveries open (a read), so their rows are seen too.
      const show = page.getByRole('button', { name: 'Show deliveries' });
      while ((await show.count()) > 0) await show.first().click();
      await settled(page);
      seen[name] = await controlsBeyondReadOnly(page);
    }
    expect(seen).toEqual({ Agent: [], 'Call detail': [], Webhooks: [] });
    await page.goto(`${baseUrl()}/agents/${agentId}`);
    await page.getByRole('group', { name: 'Webhook (action 1)' }).waitFor();
    await kit.shot(page, 'viewer-agent-1280');
    await context.close();
    expect(kit.cspViolations).toEqual([]);
  }, 90_000);
});
