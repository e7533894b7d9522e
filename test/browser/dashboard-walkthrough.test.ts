import type { Page } from 'playwright-core';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, type Json } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../helpers/wait.js';
import { DashboardBrowser, describeWithBrowser, settled } from './dashboard-kit.js';

/**
 * Issue 43's Done-when, as a new user does it, in the dashboard alone (system Chromium against the
 * local stack): open the demo agent from Agents; change the greeting and the tool's timeout (the Save
 * bar says "2 changes"); save; Versions shows just those two changes; two test chats, one on the new
 * version and one on the version before (picked in the chat's form); the Versions section's link to
 * Analytics compares the two versions, a chat each. Screenshots under
 * .local/test-output/dashboard-walkthrough/.
 */

/** The demo agent's tool, as `npm start`'s demo gives it (lib/tools/cli/demo.ts). */
const BOOK_INSPECTION = {
  type: 'function',
  name: 'book_inspection',
  description: 'Book an inspection of a property for the caller.',
  parameters: {
    type: 'object',
    properties: { date: { type: 'string', description: 'When the caller would like to inspect.' } },
    required: ['date'],
  },
  url: 'https://tools.example.com/book',
  timeout_ms: 5000,
};

describeWithBrowser('dashboard in Chromium: the Done-when walkthrough of issue 43', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  let version: number;

  beforeAll(async () => {
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    const patched = await api('PATCH', `/api/v1/workspaces/${demo.workspace_id}/agents/${demo.agent_id}`, {
      token: demo.owner_token,
      body: { tools: [BOOK_INSPECTION] },
    });
    expect(patched.status).toBe(200);
    version = patched.body.version as number;
    kit = await DashboardBrowser.launch('dashboard-walkthrough');
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
  });

  /**
   * A test chat from the agent page's button (on an earlier version when given): the greeting,
   * "goodbye", the agent ends it; its call id.
   */
  const testChat = async (page: Page, greeting: string, earlier?: number): Promise<string> => {
    await page.getByRole('button', { name: 'Test chat', exact: true }).click();
    const chat = page.getByRole('region', { name: 'Test chat' });
    if (earlier !== undefined) {
      await chat.getByLabel('Version').selectOption({ label: `Version ${earlier}` });
      await kit.checkPage(page, 'test chat form', 'test-chat-earlier-version-1280', { axe: true });
    }
    await chat.getByRole('button', { name: 'Start chat' }).click();
    if (earlier !== undefined)
      await chat.getByRole('heading', { name: `Test chat · version ${earlier}` }).waitFor();
    await chat.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await chat.locator('.chat-agent').filter({ hasText: greeting }).waitFor();
    await chat.getByLabel('Message').fill('Thanks, goodbye.');
    await chat.getByRole('button', { name: 'Send' }).click();
    await chat.getByRole('status').filter({ hasText: 'Ended' }).waitFor();
    await chat.getByText('The agent ended the conversation.').waitFor();
    // Its last words are whole, and no longer "typing".
    await expect(chat.locator('.chat-agent').allTextContents()).resolves.toEqual([
      `Agent ${greeting}`,
      'Agent Thank you for calling. Goodbye!',
    ]);
    await expect(chat.locator('.typing').count()).resolves.toBe(0);
    const link = await chat.getByRole('link', { name: /^Call call_/ }).getAttribute('href');
    await chat.getByRole('button', { name: 'Close' }).click();
    return (link ?? '').replace('/calls/', '');
  };

  it('a greeting and a timeout changed ("2 changes"), saved, diffed, a chat on each version, Analytics compares them', async () => {
    const { context, page } = await kit.signedIn(demo.owner_email, { path: '/agents' });
    await settled(page);
    await page.getByRole('link', { name: 'Ava (demo receptionist)' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ava (demo receptionist)' }).waitFor();
    await settled(page);
    await page.getByRole('link', { name: `Version ${version}`, exact: true }).waitFor();

    await page.getByLabel('Greeting', { exact: true }).fill('Hello, Ava at Harbour Realty. How can I help?');
    await page
      .getByRole('group', { name: 'Function tool (tool 1)', exact: true })
      .getByLabel('Timeout (ms)')
      .fill('8000');
    const bar = page.getByRole('group', { name: 'Save changes' });
    await bar.getByText('2 changes').waitFor();
    await expect(bar.textContent()).resolves.toContain('Prompt & greeting, Tools');
    await kit.checkPage(page, 'two changes', 'agent-2-changes-1280', { axe: true });
    await bar.getByRole('button', { name: 'Save' }).click();
    await bar.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('link', { name: `Version ${version + 1}`, exact: true }).waitFor();

    // Versions: the new one against the one before, the two changes alone.
    await page.getByRole('link', { name: `View version ${version + 1}` }).click();
    const diff = page.getByRole('region', {
      name: `Changes from version ${version} to version ${version + 1}`,
    });
    await diff.waitFor();
    await diff.getByText('The prompt is the same.').waitFor();
    const rows = diff.locator('tbody tr');
    await expect(rows.locator('th').allTextContents()).resolves.toEqual([
      'Greeting',
      'Tool: book_inspection',
    ]);
    await expect(rows.nth(1).locator('del').textContent()).resolves.toBe('{"timeout_ms":5000}');
    await expect(rows.nth(1).locator('ins').textContent()).resolves.toBe('{"timeout_ms":8000}');
    await kit.checkPage(page, 'version diff', 'version-diff-1280', { axe: true });

    const after = await testChat(page, 'Hello, Ava at Harbour Realty. How can I help?');
    const before = await testChat(page, 'Hi, this is Ava from Harbour Realty.', version);

    // Each chat is a call on its version; once they are counted, Analytics sets them side by side.
    const ws = `/api/v1/workspaces/${demo.workspace_id}`;
    for (const [id, expected] of [
      [before, version],
      [after, version + 1],
    ] as const) {
      const call = await waitFor(
        async () => {
          const res = await api('GET', `${ws}/calls/${id}`, { token: demo.owner_token });
          return res.status === 200 && res.body.status === 'completed' ? (res.body as Json) : undefined;
        },
        { what: `test chat ${id} to complete` },
      );
      expect({ channel: call.channel, agent_version: call.agent_version }).toEqual({
        channel: 'web',
        agent_version: expected,
      });
    }
    await waitForQuiescence({ timeoutMs: 60_000 });
    await page.getByRole('link', { name: "compare versions' calls in Analytics" }).click();
    await page.waitForURL((url) => url.pathname === '/analytics');
    const comparison = page.getByRole('region', { name: 'Version comparison' });
    await comparison.waitFor();
    await waitFor(async () => (await comparison.locator('tbody tr').count()) === 2, {
      what: 'two versions compared',
    });
    const table = await comparison
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].slice(0, 2).map((c) => c.textContent)),
      );
    expect(table).toEqual([
      [`Version ${version}`, '1'],
      [`Version ${version + 1}`, '1'],
    ]);
    await kit.checkPage(page, 'analytics versions', 'analytics-versions-1280', { axe: true });
    await context.close();
  }, 180_000);
});
