import type { Page } from 'playwright-core';
import { callKey } from '../../functions/calling/call-shards.js';
import { CallEntity } from '../../functions/calling/entities.js';
import { readCall } from '../../functions/calling/lifecycle.js';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, baseUrl, type Json } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../helpers/wait.js';
import { DashboardBrowser, describeWithBrowser, settled } from './dashboard-kit.js';

/**
 * The console an operator prefers (issue 43), in a real browser against the local stack, at 1280 and
 * 390 px, photographed under .local/test-output/dashboard-operator/: the agent editor in sections (the
 * rail, a section's changes marked, the Save bar saying "2 changes" for a greeting and a tool's
 * timeout; the {{parameters}} a call must pass); the version it saved, diffed against the one before;
 * the calls list's columns and its filters kept in the URL (a voicemail by its end reason, a call handed
 * to Sales by its handoffs); a call
 * replayed (a click on a transcript line moves the player's time; tool calls inline; nothing wider
 * than the screen); a voicemail's page says it gets no analysis; Analytics compares versions; the
 * header is one line at 1280 and compact at 390; a live call's Hang up; the ledger names its calls.
 */

const MACHINE = '+61491570117';
const ANSWERED = '+61491570156';
/** The simulator opens no relay session for it: the call stays in progress until hung up. */
const STAYS_UP = '+61491570116';
const WIDTHS = [1280, 390] as const;

const fitsWidth = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth <= window.innerWidth') as Promise<boolean>;

describeWithBrowser('dashboard in Chromium: the console an operator prefers', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  let voicemailId: string;
  let answeredId: string;
  let handedOffId: string;

  const ws = () => `/api/v1/workspaces/${demo.workspace_id}`;
  const owner = () => ({ token: demo.owner_token });
  const get = async (path: string): Promise<Json> => {
    const res = await api('GET', `${ws()}${path}`, owner());
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const startCall = async (to: string): Promise<string> => {
    const res = await api('POST', `${ws()}/agents/${demo.agent_id}/start-call`, {
      ...owner(),
      body: { to_phone: to },
    });
    if (res.status !== 201) throw new Error(`start-call: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const ended = (id: string) =>
    waitFor(
      async () => {
        const call = await get(`/calls/${id}`);
        return ['completed', 'failed'].includes(call.status) && call.credits !== null ? call : undefined;
      },
      { what: `call ${id} to end and be charged`, timeoutMs: 90_000 },
    );

  /** The conversation engine's record of a handoff to Sales (as test/e2e/handoffs/ does; the relay's own is tested there). */
  const handedToSales = async (callId: string) => {
    const call = await waitFor(
      async () => {
        const read = await readCall(demo.workspace_id, callId);
        return read?.conversation ? read : undefined;
      },
      { what: `call ${callId}'s conversation`, timeoutMs: 30_000 },
    );
    await CallEntity.patch(callKey(demo.workspace_id, callId))
      .set({
        conversation: JSON.stringify({
          ...(JSON.parse(call.conversation ?? '{}') as object),
          active_agent_id: demo.sales_agent_id,
          handoffs: [
            {
              from_agent_id: demo.agent_id,
              to_agent_id: demo.sales_agent_id,
              to_agent_version: 1,
              at: call.endedAt ?? call.createdAt,
              reason: 'caller asked for Sales',
              summary: 'wants to buy',
            },
          ],
        }),
      })
      .go();
  };

  beforeAll(async () => {
    const state = stackState() as unknown as StackState;
    demo = await seed(state, { plan: 'growth' }, () => undefined);
    kit = await DashboardBrowser.launch('dashboard-operator');
    // Version 2: a function tool, and voicemail detection (a machine's call ends as voicemail).
    const patched = await api('PATCH', `${ws()}/agents/${demo.agent_id}`, {
      ...owner(),
      body: {
        voicemail: { action: 'hangup' },
        tools: [
          {
            type: 'function',
            name: 'book_inspection',
            description: 'Books an inspection of a listing',
            parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
            url: 'https://tools.example.com/book',
          },
        ],
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.version).toBe(2);
    voicemailId = await startCall(MACHINE);
    answeredId = await startCall(ANSWERED);
    handedOffId = await startCall(ANSWERED);
    await ended(voicemailId);
    await ended(answeredId);
    await ended(handedOffId);
    await handedToSales(handedOffId);
    await waitForQuiescence({ timeoutMs: 60_000 });
  }, 240_000);
  afterAll(async () => {
    await kit?.close();
  });

  it('the agent editor: a rail of sections; a greeting and a tool timeout are "2 changes"; saved, Versions diffs it', async () => {
    const { context, page } = await kit.signedIn(demo.owner_email, { path: `/agents/${demo.agent_id}` });
    await settled(page);
    const rail = page.getByRole('navigation', { name: 'Agent sections' });
    await expect(rail.getByRole('link').allTextContents()).resolves.toEqual([
      'Prompt & greeting',
      'Voice & language',
      'Tools',
      'Knowledge',
      'Call handling',
      'Analysis',
      'Post-call actions',
      'Handoffs',
      'PII redaction',
      'Versions',
      'Test',
    ]);
    // The prompt's parameters, listed as those a call must pass.
    const parameters = page.getByRole('group', { name: 'What a call must pass' });
    await expect(parameters.locator('code').allTextContents()).resolves.toEqual([
      'name',
      'listing_id',
      'listing_address',
      'listing_price',
    ]);
    const bar = page.getByRole('group', { name: 'Save changes' });
    await expect(bar.textContent()).resolves.toContain('No unsaved changes');

    await page.getByLabel('Greeting', { exact: true }).fill('Hello from the editor test.');
    await page
      .getByRole('group', { name: 'Function tool (tool 1)', exact: true })
      .getByLabel('Timeout (ms)')
      .fill('5000');
    await bar.getByText('2 changes').waitFor();
    await expect(bar.textContent()).resolves.toContain('Prompt & greeting, Tools');
    // The sections changed are marked in the rail and at their headings; the others are not.
    await expect(rail.locator('a.dirty').allTextContents()).resolves.toEqual([
      'Prompt & greeting (1 change)',
      'Tools (1 change)',
    ]);
    await page
      .getByRole('region', { name: /^Tools/ })
      .getByText('1 change')
      .waitFor();
    // The Save bar stays in view wherever the page is scrolled.
    await page.getByRole('region', { name: /^Post-call actions/ }).scrollIntoViewIfNeeded();
    await expect(bar.getByRole('button', { name: 'Save' }).isVisible()).resolves.toBe(true);
    expect(await fitsWidth(page)).toBe(true);
    await kit.checkPage(page, 'agent editor with changes', 'agent-editor-2-changes-1280', { axe: true });

    await bar.getByRole('button', { name: 'Save' }).click();
    await bar.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect(rail.locator('a.dirty').count()).resolves.toBe(0);
    const agent = (await get(`/agents/${demo.agent_id}`)) as Json;
    expect(agent).toMatchObject({ version: 3, greeting: 'Hello from the editor test.' });
    expect(agent.tools[0].timeout_ms).toBe(5000);
    const v3 = (await get(`/agents/${demo.agent_id}/versions`)).items[0];
    expect(v3).toMatchObject({ version: 3, changed: ['greeting', 'tools'], restored_from: null });

    // Versions: version 3 against version 2, the greeting and the tool in the table.
    await page.getByRole('link', { name: 'View version 3' }).click();
    const diff = page.getByRole('region', { name: 'Changes from version 2 to version 3' });
    await diff.waitFor();
    await diff.getByText('The prompt is the same.').waitFor();
    const rows = diff.locator('tbody tr');
    await expect(rows.locator('th').allTextContents()).resolves.toEqual([
      'Greeting',
      'Tool: book_inspection',
    ]);
    await expect(rows.first().locator('ins').textContent()).resolves.toBe('Hello from the editor test.');
    // The tool's row: only what differs in it (its timeout), not its whole definition twice.
    await expect(rows.nth(1).locator('ins').textContent()).resolves.toBe('{"timeout_ms":5000}');
    // The field's name stays readable beside a long value (never a letter a line).
    expect((await rows.nth(1).locator('th').boundingBox())?.width).toBeGreaterThan(100);
    await kit.checkPage(page, 'version diff', 'version-diff-1280', { axe: true });

    // Against version 1: the prompt is the same, the tool was added.
    await diff.getByLabel('Compare with').selectOption({ label: 'Version 1' });
    const fromOne = page.getByRole('region', { name: 'Changes from version 1 to version 3' });
    await fromOne
      .locator('tbody tr')
      .filter({ hasText: 'Tool: book_inspection' })
      .getByText('(none)')
      .waitFor();
    expect(new URL(page.url()).search).toBe('?version=3&compare=1');

    // A restore says what it restored.
    await page.goto(`${baseUrl()}/agents/${demo.agent_id}?version=2#versions`);
    await page.getByRole('button', { name: 'Restore version 2' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored version 2 as version 4.' }).waitFor();
    await page
      .getByRole('table', { name: 'Versions' })
      .getByText(/^restored from version 2: /)
      .waitFor();
    await context.close();

    // At 390 px: the rail scrolls sideways in its own box; the page does not.
    const narrow = await kit.signedIn(demo.owner_email, { path: `/agents/${demo.agent_id}`, width: 390 });
    await settled(narrow.page);
    await narrow.page.getByLabel('Greeting', { exact: true }).fill('Hello at 390.');
    await narrow.page.getByRole('group', { name: 'Save changes' }).getByText('1 change').waitFor();
    // The rail is there, one line (the main navigation's narrow rules do not hide or wrap it).
    const narrowRail = narrow.page.getByRole('navigation', { name: 'Agent sections' });
    await expect(narrowRail.isVisible()).resolves.toBe(true);
    expect((await narrowRail.boundingBox())?.height).toBeLessThan(50);
    await expect(narrowRail.locator('a.dirty').allTextContents()).resolves.toEqual([
      'Prompt & greeting (1 change)',
    ]);
    expect(await fitsWidth(narrow.page)).toBe(true);
    await kit.checkPage(narrow.page, 'agent editor at 390', 'agent-editor-390', { axe: true });
    await narrow.page.goto(`${baseUrl()}/agents/${demo.agent_id}?version=3&compare=2#versions`);
    await narrow.page
      .getByRole('region', { name: 'Changes from version 2 to version 3' })
      .locator('tbody tr')
      .first()
      .waitFor();
    expect(await fitsWidth(narrow.page)).toBe(true);
    await kit.checkPage(narrow.page, 'version diff at 390', 'version-diff-390', { axe: true });
    await narrow.context.close();
  }, 180_000);

  it('the calls list: version, handoffs, channel, answered by and end reason columns; filters kept in the URL', async () => {
    for (const width of WIDTHS) {
      const { context, page } = await kit.signedIn(demo.owner_email, { path: '/calls', width });
      await settled(page);
      const table = page.getByRole('table', { name: 'Calls' });
      await table.locator('tbody tr').nth(1).waitFor();
      await page.getByRole('combobox', { name: 'End reason' }).selectOption({ label: 'Voicemail' });
      await page.waitForURL((url) => url.search === '?end_reason=voicemail');
      await waitFor(async () => (await table.locator('tbody tr').count()) === 1, {
        what: 'the voicemail alone',
      });
      const row = table.locator('tbody tr').first();
      await expect(row.textContent()).resolves.toMatch(/A machine/);
      await expect(row.textContent()).resolves.toMatch(/Voicemail/);
      await expect(row.textContent()).resolves.toMatch(/v2/);
      await expect(row.getByRole('link').getAttribute('href')).resolves.toBe(`/calls/${voicemailId}`);
      expect(await fitsWidth(page)).toBe(true);
      await kit.checkPage(page, `calls filtered at ${width}`, `calls-voicemail-${width}`, { axe: true });
      // The URL is the saved filter: opened afresh, the list is filtered the same way.
      await page.goto(`${baseUrl()}/calls?answered_by=machine&agent_version=2&channel=phone`);
      await settled(page);
      await expect(page.getByRole('combobox', { name: 'Answered by' }).inputValue()).resolves.toBe('machine');
      await expect(page.getByRole('spinbutton', { name: 'Agent version' }).inputValue()).resolves.toBe('2');
      await waitFor(async () => (await table.locator('tbody tr').count()) === 1, {
        what: 'the machine call alone',
      });
      await page.getByRole('link', { name: 'Clear filters' }).click();
      await page.waitForURL((url) => url.pathname === '/calls' && url.search === '');
      // Handoffs: the call handed to Sales says so in its column; the filter keeps it alone.
      // (At 390 px the header row is hidden: each cell says its column.)
      await table.locator('thead th', { hasText: /^Handoffs$/ }).waitFor({ state: 'attached' });
      await page.getByRole('combobox', { name: 'Handoffs' }).selectOption({ label: 'Handed off' });
      await page.waitForURL((url) => url.search === '?handed_off=true');
      await waitFor(async () => (await table.locator('tbody tr').count()) === 1, {
        what: 'the handed-off call alone',
      });
      const handed = table.locator('tbody tr').first();
      await expect(handed.getByRole('link').getAttribute('href')).resolves.toBe(`/calls/${handedOffId}`);
      const cell = handed.locator('td[data-label="Handoffs"]');
      // The target's name comes with the workspace's agents.
      await waitFor(async () => (await cell.textContent()) === '1 → Sales', { what: 'the handoff to Sales' });
      await expect(cell.isVisible()).resolves.toBe(true);
      expect(await fitsWidth(page)).toBe(true);
      await kit.checkPage(page, `calls handed off at ${width}`, `calls-handed-off-${width}`, { axe: true });
      // Not handed off, with the voicemail's end reason, from the URL: the voicemail, its column a dash.
      await page.goto(`${baseUrl()}/calls?handed_off=false&end_reason=voicemail`);
      await settled(page);
      await expect(page.getByRole('combobox', { name: 'Handoffs' }).inputValue()).resolves.toBe('false');
      await waitFor(
        async () =>
          (await table.locator('tbody tr').count()) === 1 &&
          (await table.locator('tbody tr').first().getByRole('link').getAttribute('href')) ===
            `/calls/${voicemailId}`,
        { what: 'the voicemail alone' },
      );
      await expect(
        table.locator('tbody tr').first().locator('td[data-label="Handoffs"]').textContent(),
      ).resolves.toBe('—');
      await context.close();
    }
  }, 120_000);

  it('a call replayed: a click on a transcript line moves the player; tool calls inline; nothing overflows', async () => {
    const call = (await get(`/calls/${answeredId}`)) as Json;
    expect(call.recording_available).toBe(true);
    expect(call.tool_calls.length).toBeGreaterThan(0);
    for (const width of WIDTHS) {
      const { context, page } = await kit.signedIn(demo.owner_email, { path: `/calls/${answeredId}`, width });
      await settled(page);
      const time = page.getByLabel('Playing at');
      await time.waitFor({ timeout: 30_000 });
      await expect(time.textContent()).resolves.toMatch(/^0:00/);
      const turns = page.locator('.transcript > li');
      // A line heard alone for a while (the next starts 2 s or more later), so it is the one highlighted.
      const transcript = call.transcript as { offset_seconds: number }[];
      // Within the recording (a seek past its end is its end, where the last line is the one heard).
      const recorded =
        (call.recording?.duration_seconds as number | null) ?? (call.duration_seconds as number);
      const target = transcript.findIndex(
        (t, i) =>
          t.offset_seconds >= 2 &&
          t.offset_seconds < recorded - 2 &&
          (transcript[i + 1]?.offset_seconds ?? Infinity) >= t.offset_seconds + 2,
      );
      expect(target).toBeGreaterThan(0);
      const line = turns.nth(target);
      await expect(line.getByRole('button').textContent()).resolves.toMatch(/^\d+:\d{2}$/);
      await line.getByRole('button').click();
      const at = Math.floor(call.transcript[target].offset_seconds);
      const expected = `${Math.floor(at / 60)}:${String(at % 60).padStart(2, '0')}`;
      await waitFor(async () => ((await time.textContent()) ?? '').startsWith(expected.slice(0, -1)), {
        what: `the player to move to ${expected}`,
      });
      await page.evaluate("document.querySelector('audio').pause()");
      const heard = await page.evaluate(
        "[...document.querySelectorAll('.transcript > li')].findIndex((li) => li.getAttribute('aria-current') === 'true')",
      );
      expect({ heard, offsets: transcript.map((t) => t.offset_seconds), recorded }).toEqual({
        heard: target,
        offsets: transcript.map((t) => t.offset_seconds),
        recorded,
      });
      await expect(page.locator('.transcript > li.current').count()).resolves.toBe(1);
      // The agent's tool calls, inline with their type and status; the table has the rest.
      const marker = page.locator('.tool-marker').first();
      await expect(marker.textContent()).resolves.toContain(call.tool_calls[0].name);
      await expect(marker.textContent()).resolves.toMatch(/builtin|function|mcp/);
      const table = page.getByRole('region', { name: 'Tool calls' });
      await expect(table.locator('thead th').allTextContents()).resolves.toEqual([
        'Tool',
        'Arguments',
        'Result',
        'Type',
        'Status',
        'HTTP status',
        'Duration',
        'At',
      ]);
      // One sentiment, said where it comes from.
      await expect(page.locator('dt', { hasText: /^Sentiment$/ }).count()).resolves.toBe(1);
      expect(await fitsWidth(page)).toBe(true);
      await kit.checkPage(page, `call replay at ${width}`, `call-replay-${width}`, { axe: true });
      // The voicemail's page says why it has no analysis.
      await page.goto(`${baseUrl()}/calls/${voicemailId}`);
      await page
        .getByRole('region', { name: 'Analysis' })
        .getByText('No analysis: a machine answered (voicemail), so there was no conversation to analyse.')
        .waitFor();
      await kit.checkPage(page, `voicemail call at ${width}`, `call-voicemail-${width}`, { axe: true });
      await context.close();
    }
  }, 120_000);

  it('a live call has Hang up; Analytics compares versions; the ledger names the calls', async () => {
    const live = await startCall(STAYS_UP);
    await waitFor(async () => ((await get(`/calls/${live}`)).status === 'inprogress' ? true : undefined), {
      what: 'the call to be in progress',
      timeoutMs: 30_000,
    });
    const { context, page } = await kit.signedIn(demo.owner_email, { path: `/calls/${live}` });
    await settled(page);
    await kit.checkPage(page, 'live call', 'call-live-1280', { axe: true });
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page
      .getByRole('status', { name: 'Call status' })
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 30_000 });
    await expect(page.getByRole('button', { name: 'Hang up' }).count()).resolves.toBe(0);
    const hungUp = await get(`/calls/${live}`);
    expect(hungUp).toMatchObject({ status: 'completed', end_reason: 'hangup' });

    // A call on the saved version 4 (the restore), beside version 2's: Analytics sets them side by side.
    await ended(await startCall(ANSWERED));
    await waitForQuiescence({ timeoutMs: 60_000 });
    const report = await get(`/analytics/calls?group_by=agent_version&agent_id=${demo.agent_id}`);
    const versions = (report.items as Json[]).filter((i) => i.calls > 0).map((i) => i.agent_version);
    expect(versions.length).toBeGreaterThanOrEqual(2);
    for (const width of WIDTHS) {
      const view = await kit.signedIn(demo.owner_email, { path: '/analytics', width });
      // The Versions section's link: Analytics grouped by version, for the agent.
      await view.page.goto(`${baseUrl()}/analytics?group_by=agent_version&agent_id=${demo.agent_id}`);
      await settled(view.page);
      const comparison = view.page.getByRole('region', { name: 'Version comparison' });
      await comparison.waitFor();
      await expect(comparison.locator('tbody tr').count()).resolves.toBe(versions.length);
      await expect(comparison.locator('thead th').allTextContents()).resolves.toEqual([
        'Version',
        'Calls',
        'Success rate',
        'Mean duration',
        'Credits',
        'Latency p50',
      ]);
      await comparison.getByRole('img', { name: /by version$/ }).waitFor();
      expect(await fitsWidth(view.page)).toBe(true);
      await kit.checkPage(view.page, `analytics versions at ${width}`, `analytics-versions-${width}`, {
        axe: true,
      });
      // The header: one line at 1280; at 390 compact (Menu, the name, Sign out).
      const header = await view.page.locator('header.top').boundingBox();
      expect(header?.height).toBeLessThan(width === 1280 ? 60 : 56);
      const signOut = await view.page.getByRole('button', { name: 'Sign out' }).boundingBox();
      const brand = await view.page.getByText('Voice agents', { exact: true }).boundingBox();
      expect(Math.abs((signOut?.y ?? 0) - (brand?.y ?? 100))).toBeLessThan(20);
      await expect(view.page.getByRole('button', { name: 'Menu' }).isVisible()).resolves.toBe(width === 390);
      await view.context.close();
    }

    // The ledger: each call's line names it (who, when) and links to it.
    await page.goto(`${baseUrl()}/billing`);
    await settled(page);
    const callLink = page.getByRole('link', { name: new RegExp(`^Call to \\${MACHINE} · `) });
    await callLink.waitFor();
    await kit.checkPage(page, 'billing ledger', 'billing-ledger-1280', { axe: true });
    await callLink.click();
    await page.waitForURL((url) => url.pathname === `/calls/${voicemailId}`);
    await context.close();
  }, 240_000);
});
