import type { Page } from 'playwright-core';
import { receiveCall } from '../../lib/tools/cli/call.js';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, baseUrl, type Json } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../helpers/wait.js';
import { DashboardBrowser, describeWithBrowser, settled, NAV_PAGES } from './dashboard-kit.js';

/**
 * The console in a real browser against the local stack: the calls list names the other party (the
 * caller of an inbound call) and its agent, phone and campaign filters are sent to the API and narrow
 * the list; analytics shows the API's headline figures; the SMS composer counts segments by the API's
 * rule; at 390 px the navigation is behind a Menu button. Every page passes axe-core at 1280 and
 * 390 px, is no wider than the screen, and is photographed under .local/test-output/dashboard-console/.
 */

/** The caller of the inbound call: an ordinary mobile the simulators treat as a person. */
const CALLER = `+61493${String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0')}`;
const CALLED = '+61491570156';

const PAGES = NAV_PAGES;

/** The rows of the calls table: the text of each row's first cell (the other party). */
const otherParties = async (page: Page): Promise<string[]> =>
  (await page.getByRole('table', { name: 'Calls' }).locator('tbody tr td:first-child').allTextContents()).map(
    (text) => text.replace(/^Other party:\s*/, '').trim(),
  );

/** Whether the page is no wider than its viewport (nothing scrolls sideways but inside its own box). */
const fitsWidth = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth <= window.innerWidth') as Promise<boolean>;

describeWithBrowser('dashboard in Chromium: the console', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  let inboundId: string;
  let outboundId: string;
  let agentB: { id: string; name: string };
  let agentA: { id: string; name: string };

  const ws = () => `/api/v1/workspaces/${demo.workspace_id}`;
  const get = async (path: string): Promise<Json> => {
    const res = await api('GET', `${ws()}${path}`, { token: demo.owner_token });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const ended = (id: string) =>
    waitFor(
      async () => {
        const call = await get(`/calls/${id}`);
        return ['completed', 'failed'].includes(call.status) && call.credits !== null ? call : undefined;
      },
      { what: `call ${id} to end and be charged`, timeoutMs: 90_000 },
    );

  beforeAll(async () => {
    const state = stackState() as unknown as StackState;
    demo = await seed(state, { plan: 'growth' }, () => undefined);
    kit = await DashboardBrowser.launch('dashboard-console');
    const agents = (await get('/agents')).items as { id: string; name: string }[];
    agentA = agents.find((a) => a.id === demo.agent_id) as { id: string; name: string };
    agentB = agents.find((a) => a.id === demo.agent_without_number_id) as { id: string; name: string };
    // The spare number answers for the second agent; the caller rings it (an inbound call of agent B).
    const numbers = (await get('/phone-numbers')).items as { id: string; phone_number: string }[];
    const spare = numbers.find((n) => n.phone_number === demo.spare_phone_number);
    if (!spare) throw new Error('the seed has no spare number');
    const connected = await api('PATCH', `${ws()}/phone-numbers/${spare.id}`, {
      token: demo.owner_token,
      body: { agent_id: agentB.id },
    });
    expect(connected.status).toBe(200);
    const received = await receiveCall(state, { from: CALLER, to: spare.phone_number });
    expect(received.accepted).toBe(true);
    inboundId = received.call_id as string;
    const started = await api('POST', `${ws()}/agents/${agentA.id}/start-call`, {
      token: demo.owner_token,
      body: { to_phone: CALLED },
    });
    expect(started.status).toBe(201);
    outboundId = started.body.id;
    await ended(inboundId);
    await ended(outboundId);
    await waitForQuiescence({ timeoutMs: 60_000 });
  }, 240_000);
  afterAll(async () => {
    await kit?.close();
  });

  it('the calls list shows the caller of an inbound call; the agent and phone filters narrow it, sent to the API', async () => {
    const { context, page } = await kit.signedIn(demo.owner_email, { path: '/calls' });
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === `${ws()}/calls`) asked.push(url.search);
    });
    await settled(page);
    await waitFor(async () => (await otherParties(page)).length === 2, { what: 'both calls listed' });
    expect((await otherParties(page)).sort()).toEqual([CALLED, CALLER].sort());
    const inboundRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: CALLER }) });
    await expect(inboundRow.textContent()).resolves.toContain('inbound');
    await expect(inboundRow.textContent()).resolves.toContain(agentB.name);

    // The agent filter: a select by name, sent as agent_id; the list is that agent's calls only.
    await page.getByRole('combobox', { name: 'Agent', exact: true }).selectOption({ label: agentB.name });
    await waitFor(async () => asked.some((q) => q.includes(`agent_id=${agentB.id}`)), {
      what: 'the agent filter to be sent',
    });
    await waitFor(async () => JSON.stringify(await otherParties(page)) === JSON.stringify([CALLER]), {
      what: "the list to narrow to agent B's call",
    });
    await kit.shot(page, 'calls-agent-filter-1280');

    // The phone filter (the other party), sent as phone; the other agent's list has no call with it.
    await page.getByRole('combobox', { name: 'Agent', exact: true }).selectOption({ label: agentA.name });
    await waitFor(async () => JSON.stringify(await otherParties(page)) === JSON.stringify([CALLED]), {
      what: "the list to show agent A's call",
    });
    await page.getByRole('combobox', { name: 'Agent', exact: true }).selectOption({ value: '' });
    await page.getByRole('searchbox', { name: 'Phone', exact: true }).fill(CALLER);
    await page.getByRole('searchbox', { name: 'Phone', exact: true }).press('Enter');
    await waitFor(async () => asked.some((q) => q.includes(`phone=${encodeURIComponent(CALLER)}`)), {
      what: 'the phone filter to be sent',
    });
    await waitFor(async () => JSON.stringify(await otherParties(page)) === JSON.stringify([CALLER]), {
      what: 'the list to narrow to the caller',
    });
    await context.close();
  }, 90_000);

  it('analytics: the headline figures are the API’s totals', async () => {
    const report = await get('/analytics/calls');
    expect(report.totals.calls).toBe(2);
    const { context, page } = await kit.signedIn(demo.owner_email, { path: '/analytics' });
    await settled(page);
    await page.locator('dl.figures').waitFor();
    const figure = async (label: string) =>
      (
        await page
          .locator('.figure')
          .filter({ has: page.locator('dt', { hasText: label }) })
          .locator('.figure-value')
          .textContent()
      )?.trim();
    await expect(figure('Calls')).resolves.toBe('2');
    await expect(figure('Answer rate')).resolves.toBe(
      report.totals.answer_rate === null ? '—' : `${Math.round(report.totals.answer_rate * 1000) / 10} %`,
    );
    await expect(figure('Success rate')).resolves.toBe(
      report.totals.success_rate === null ? '—' : `${Math.round(report.totals.success_rate * 1000) / 10} %`,
    );
    await expect(figure('Credits')).resolves.toBe(
      new Intl.NumberFormat('en-AU').format(report.totals.credits),
    );
    const p50 = report.totals.turn_latency.p50_ms;
    await expect(figure('Turn latency p50')).resolves.toBe(
      p50 === null ? '—' : `${new Intl.NumberFormat('en-AU').format(p50)} ms`,
    );
    // The table lists only the days with calls; the chart spans the page's width.
    const dayRows = page.locator('.table-wrap table tbody tr');
    await expect(dayRows.count()).resolves.toBe(report.items.filter((i: Json) => i.calls > 0).length);
    await page.locator('.chart canvas').first().waitFor();
    const widths = (await page.evaluate(
      "({ chart: document.querySelector('.chart').clientWidth, main: document.querySelector('main').clientWidth })",
    )) as { chart: number; main: number };
    expect(widths.chart).toBeGreaterThan(widths.main * 0.85);
    await kit.shot(page, 'analytics-headline-1280');
    await context.close();
  }, 60_000);

  it('the SMS composer counts characters and segments by the API’s rule, live', async () => {
    const { context, page } = await kit.signedIn(demo.owner_email, { path: '/sms' });
    const counter = page.getByTestId('segment-counter').first();
    const message = page.getByRole('form', { name: 'Send an SMS' }).getByLabel('Message');
    await message.fill('a'.repeat(160));
    await expect(counter.textContent()).resolves.toMatch(
      /^160 characters · 1 segment \(GSM-7, 160 a message\)$/,
    );
    await message.fill('a'.repeat(161));
    await expect(counter.textContent()).resolves.toMatch(
      /^161 characters · 2 segments \(GSM-7, 153 a part\)$/,
    );
    await message.fill('😀');
    await expect(counter.textContent()).resolves.toMatch(/1 segment \(UCS-2, 70 a message\)$/);
    await message.fill('€'.repeat(81));
    await expect(counter.textContent()).resolves.toMatch(/^162 characters · 2 segments \(GSM-7/);
    // The from-number choice lists the workspace's numbers; the contact picker finds by name or number.
    const from = page.getByLabel('From number');
    await expect(from.locator('option').allTextContents()).resolves.toEqual(
      expect.arrayContaining([demo.phone_number, demo.spare_phone_number]),
    );
    await kit.shot(page, 'sms-composer-1280');
    // The contact picker finds a contact by name; picking it fills To phone.
    const picked = `+61493${String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0')}`;
    const contact = await api('POST', `${ws()}/contacts`, {
      token: demo.owner_token,
      body: { first_name: 'Pat', last_name: 'Picker', phone: picked },
    });
    expect(contact.status).toBe(201);
    await page.getByLabel('Find a contact').fill('Pat Pi');
    await page
      .getByRole('list', { name: 'Matching contacts' })
      .getByRole('button', { name: `Pat Picker · ${picked}` })
      .click();
    await expect(page.getByLabel('To phone').inputValue()).resolves.toBe(picked);
    await page.getByLabel('To phone').fill(CALLER);
    // Sent: the API counted as the composer did.
    await from.selectOption(demo.phone_number);
    await message.fill(`${'b'.repeat(160)}!`);
    await expect(counter.textContent()).resolves.toContain('2 segments');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Sent \(2 segments/ })
      .waitFor();

    // Billing: the plan select starts on the current plan; the SMS's ledger entry links to it.
    await kit.open(page, 'Billing');
    await expect(page.getByLabel('New plan').inputValue()).resolves.toBe('growth');
    const smsLink = page.getByRole('link', { name: /^SMS sms_/ });
    await smsLink.waitFor();
    // The calls' lines name them (who, when) and link to them.
    const callLinks = page.getByRole('link', { name: /^Call (to|from) \+61\d+ · / });
    await callLinks.nth(1).waitFor();
    await expect(callLinks.count()).resolves.toBe(2);
    await expect(page.getByRole('link', { name: /^Call call_/ }).count()).resolves.toBe(0);
    await smsLink.click();
    await page.getByRole('heading', { level: 1, name: `SMS to ${CALLER}` }).waitFor();
    await page.getByText('2 (GSM-7)').waitFor();
    await context.close();
  }, 60_000);

  it('at 390 px the navigation is behind a Menu button (aria-expanded), and closes after a choice', async () => {
    const wide = await kit.signedIn(demo.owner_email, { width: 1280 });
    await expect(wide.page.getByRole('button', { name: 'Menu' }).isVisible()).resolves.toBe(false);
    await wide.context.close();

    const { context, page } = await kit.signedIn(demo.owner_email, { width: 390 });
    const menu = page.getByRole('button', { name: 'Menu' });
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(nav.getByRole('link', { name: 'Calls', exact: true }).isVisible()).resolves.toBe(false);
    await menu.click();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await nav.getByRole('link', { name: 'Calls', exact: true }).waitFor();
    await kit.shot(page, 'menu-open-390');
    await nav.getByRole('link', { name: 'Calls', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Calls' }).waitFor();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(nav.getByRole('link', { name: 'Calls', exact: true }).isVisible()).resolves.toBe(false);
    await context.close();
  }, 60_000);

  it('every page passes axe at 1280 and 390 px, is no wider than the screen, and is photographed', async () => {
    const extra: [name: string, path: string][] = [
      ['Call from the caller', `/calls/${inboundId}`],
      ['Call to a number', `/calls/${outboundId}`],
    ];
    const ledger = await api('GET', `/api/v1/organisations/${demo.organisation_id}/billing/ledger`, {
      token: demo.owner_token,
    });
    const sms = (ledger.body.items as Json[])
      .map((e) => /\bsms_[0-9A-Za-z]+/.exec(e.source)?.[0])
      .find(Boolean);
    if (sms) extra.push(['SMS message', `/sms/messages/${sms}`]);
    const tooWide: string[] = [];
    for (const width of [1280, 390]) {
      const { context, page } = await kit.signedIn(demo.owner_email, { width });
      for (const name of PAGES) {
        await kit.open(page, name);
        await kit.checkPage(page, `${name} at ${width}`, `${name}-${width}`, { axe: true });
        if (!(await fitsWidth(page))) tooWide.push(`${name} at ${width}`);
        // The Webhooks page says where post-call deliveries come from.
        if (name === 'Webhooks')
          await expect(page.locator('main').textContent()).resolves.toMatch(
            /Post-call deliveries do not come from here: the post-call webhook is one of an agent's post-call actions/,
          );
      }
      for (const [name, path] of extra) {
        await page.goto(`${baseUrl()}${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await kit.checkPage(page, `${name} at ${width}`, `${name}-${width}`, { axe: true });
        if (!(await fitsWidth(page))) tooWide.push(`${name} at ${width}`);
      }
      await context.close();
    }
    expect(tooWide).toEqual([]);
    expect(kit.cspViolations).toEqual([]);
  }, 300_000);
});
