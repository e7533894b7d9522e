import type { Page } from 'playwright-core';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, baseUrl } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { tokenFor } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';
import { LONG_REPLY } from '../../lib/local/simulators/llm/replies.js';
import {
  controlsBeyondReadOnly,
  DashboardBrowser,
  describeWithBrowser,
  executablePath,
  seriousAxeViolations,
  settled,
  NAV_PAGES,
} from './dashboard-kit.js';

/**
 * The dashboard (web/) in a real browser: the system Chromium, driven by playwright-core, signs in as
 * a demo owner through the local identity provider's sign-in page and works every page against the
 * local stack's real API. Each page is checked with axe-core (no serious or critical violation) and
 * photographed at 1280 and 390 px under .local/test-output/dashboard/.
 */
/** The test chat talks to the voice relay the local stack serves (stack.json `voice_relay_url`). */
const relayUrl = executablePath ? stackState().voice_relay_url : undefined;

const PAGES = NAV_PAGES;

/** Until an import's progress bar is full. */
const progressComplete = (page: Page) =>
  page.locator('.import progress[value="100"]').waitFor({ timeout: 60_000 });

describeWithBrowser('dashboard in Chromium', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;

  beforeAll(async () => {
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    kit = await DashboardBrowser.launch('dashboard', ['--autoplay-policy=no-user-gesture-required']);
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
  });

  const signedIn = (email: string, width = 1280) => kit.signedIn(email, { width });
  const open = (page: Page, name: string) => kit.open(page, name);
  const shot = (page: Page, name: string) => kit.shot(page, name);

  it('serves the app with a strict CSP and SPA fallback; the sign-in keeps no token in localStorage', async () => {
    const response = await fetch(`${baseUrl()}/calls/call_unknown`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(await response.text()).toContain('<div id="app"></div>');
    const config = (await (await fetch(`${baseUrl()}/config.json`)).json()) as Record<string, string>;
    expect(config.oidc_authority).toBe(stackState().urls.identity_issuer);
    const api404 = await fetch(`${baseUrl()}/api/v1/nothing-here`);
    expect(api404.status).toBe(404);

    const { context, page } = await signedIn(demo.owner_email);
    await expect(page.getByRole('combobox', { name: 'Organisation' }).inputValue()).resolves.toBe(
      demo.organisation_id,
    );
    const stored = (await page.evaluate(
      "({ local: Object.keys(localStorage), session: Object.keys(sessionStorage).filter((key) => key.startsWith('oidc.user')) })",
    )) as { local: string[]; session: string[] };
    expect(stored.local).toEqual([]);
    expect(stored.session).toHaveLength(1);
    await context.close();
  });

  it('every page loads for the owner, passes axe and is photographed at 1280 and 390 px', async () => {
    for (const width of [1280, 390]) {
      const { context, page } = await signedIn(demo.owner_email, width);
      for (const name of PAGES) {
        if (width === 390) await page.goto(`${baseUrl()}/${name.toLowerCase().replace(/ /g, '-')}`);
        else await open(page, name);
        await page.getByRole('heading', { level: 1, name }).waitFor();
        await kit.checkPage(page, name, `${name}-${width}`, { axe: width === 1280 });
      }
      await context.close();
    }
    expect(kit.cspViolations).toEqual([]);
  }, 240_000);

  it('creates an agent: the API 422 shows next to its field, then the agent is made and opened', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await page.getByRole('button', { name: 'New agent' }).click();
    await page.getByLabel('Name', { exact: true }).fill('x'.repeat(101));
    await page.getByRole('button', { name: 'Create agent' }).click();
    const nameField = page.getByLabel('Name', { exact: true });
    await page.locator('.field-error').first().waitFor();
    await expect(nameField.getAttribute('aria-invalid')).resolves.toBe('true');

    await nameField.fill('Browser-made agent');
    await page.getByLabel('Prompt', { exact: true }).fill('Greet {{name}} and help.');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Browser-made agent' }).waitFor();
    await expect(page.locator('mark.parameter').textContent()).resolves.toBe('{{name}}');
    const agents = await api('GET', `/api/v1/workspaces/${demo.workspace_id}/agents`, {
      token: demo.owner_token,
    });
    expect(agents.body.items.filter((a: { name: string }) => a.name === 'Browser-made agent')).toHaveLength(
      1,
    );
    await shot(page, 'agent-detail-1280');
    await context.close();
  });

  it('starts a call, watches it complete, and plays its recording with the transcript following', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await page.goto(`${baseUrl()}/agents/${demo.agent_id}`);
    await page.getByLabel('To phone').fill('+61491570156');
    await page.getByRole('button', { name: 'Start call' }).click();
    await page.waitForURL(/\/calls\/call_/);
    const status = page.getByRole('status', { name: 'Call status' });
    await expect(status.textContent()).resolves.toMatch(/created|initiated|connected|inprogress|completed/);
    await status.filter({ hasText: /^completed$/ }).waitFor({ timeout: 60_000 });
    const audio = page.locator('audio');
    await audio.waitFor({ timeout: 60_000 });
    await page.locator('.transcript li').first().waitFor();
    const turns = await page.locator('.transcript li').count();
    expect(turns).toBeGreaterThan(1);
    const played = (await page.evaluate(`(async () => {
      const element = document.querySelector('audio');
      if (element.readyState < 1)
        await new Promise((resolve, reject) => {
          element.addEventListener('loadedmetadata', resolve, { once: true });
          element.addEventListener('error', () => reject(new Error('audio error')), { once: true });
        });
      await element.play();
      await new Promise((resolve) => {
        const check = () => (element.currentTime > 0 ? resolve() : requestAnimationFrame(check));
        check();
      });
      element.pause();
      return { duration: element.duration, error: element.error };
    })()`)) as { duration: number; error: unknown };
    expect(played.error).toBeNull();
    expect(played.duration).toBeGreaterThan(0);
    // A click on the last turn seeks there, and that turn is the highlighted one.
    const last = page.locator('.transcript li').last();
    await last.getByRole('button').click();
    await page.locator('.transcript li:last-child.current').waitFor();
    await expect(page.locator('.transcript li.current').count()).resolves.toBe(1);
    await page.evaluate("document.querySelector('audio').pause()");
    await shot(page, 'call-detail-1280');
    await context.close();
  }, 120_000);

  it('imports a CSV of contacts and the progress bar reaches 100 %, with the rejected row listed', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Contacts');
    const csv =
      'first_name,last_name,phone\nIvy,Lee,+61491570161\nJo,Park,+61491570162\nBad,Row,not-a-phone\n';
    await page
      .getByLabel('CSV or vCard file')
      .setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await progressComplete(page);
    await expect(page.locator('.import [role="status"]').textContent()).resolves.toMatch(/completed: 100 %/);
    await page.getByText(/Rejected rows \(1\)/).waitFor();
    await shot(page, 'contacts-import-1280');
    await context.close();
  }, 90_000);

  it('runs a campaign to completion: create, upload, start, live progress', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Campaigns');
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Campaign name').fill('Browser campaign');
    await page.getByLabel('Agent', { exact: true }).selectOption(demo.agent_id);
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('heading', { level: 1, name: 'Browser campaign' }).waitFor();
    // The demo agent's prompt uses these parameters: every row gives them.
    const csv =
      'phone,name,listing_id,listing_address,listing_price\n' +
      '+61491570171,Amy,L-1,1 Beach Rd,$900k\n+61491570172,Ben,L-2,2 Bay St,$1.1m\n';
    await page
      .getByLabel('Contacts CSV')
      .setInputFiles({ name: 'campaign.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await progressComplete(page);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page
      .getByRole('status', { name: 'Campaign status' })
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 90_000 });
    await shot(page, 'campaign-detail-1280');
    await context.close();
  }, 150_000);

  it('approves a workflow stage waiting for review', async () => {
    const created = await api('POST', `/api/v1/workspaces/${demo.workspace_id}/workflows`, {
      token: demo.owner_token,
      body: {
        name: 'Welcome new contacts',
        trigger: { type: 'event', event: 'contact.created' },
        auto_mode: false,
        stages: {
          signal: { yolo: false, conditions: [] },
          task: { yolo: false, action: { type: 'add_note', text: 'Welcome {{contact.first_name}}' } },
          outcome: { yolo: false },
        },
      },
    });
    expect(created.status).toBe(201);
    const contact = await api('POST', `/api/v1/workspaces/${demo.workspace_id}/contacts`, {
      token: demo.owner_token,
      body: { first_name: 'Wendy', last_name: 'Flow', phone: '+61491570181' },
    });
    expect(contact.status).toBe(201);
    const runsPath = `/api/v1/workspaces/${demo.workspace_id}/workflows/${created.body.id}/runs`;
    await waitFor(async () => {
      const runs = await api('GET', runsPath, { token: demo.owner_token });
      return runs.body.items?.[0]?.stages?.signal?.state === 'waiting_review'
        ? runs.body.items[0]
        : undefined;
    });
    const { context, page } = await signedIn(demo.owner_email);
    await page.goto(`${baseUrl()}/workflows/${created.body.id}`);
    await page.getByRole('button', { name: 'Approve signal' }).click();
    await page.getByRole('button', { name: 'Approve task' }).waitFor({ timeout: 30_000 });
    const runs = await api('GET', runsPath, { token: demo.owner_token });
    expect(runs.body.items).toHaveLength(1);
    expect(runs.body.items[0].stages.signal.state).not.toBe('waiting_review');
    expect(runs.body.items[0].stages.task.state).toBe('waiting_review');
    await shot(page, 'workflow-detail-1280');
    await context.close();
  }, 90_000);

  it('creates an API key (shown once) that works, then revokes it', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'API keys');
    await page.getByLabel('Key name').fill('Browser key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByLabel('API key secret').textContent()) ?? '';
    expect(secret).toMatch(/^vak_/);
    const calls = () => api('GET', `/api/v1/workspaces/${demo.workspace_id}/calls`, { token: secret });
    await expect(calls().then((r) => r.status)).resolves.toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    await expect(page.getByLabel('API key secret').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Revoke Browser key' }).click();
    await page.getByRole('cell', { name: 'revoked' }).waitFor();
    await expect(calls().then((r) => r.status)).resolves.toBe(401);
    await context.close();
  });

  it('billing: the owner buys credits (a bad quantity shows the 422 at its field) and is sent to the checkout', async () => {
    const { context, page } = await signedIn(demo.owner_email);
    await open(page, 'Billing');
    const quantity = page.getByLabel('Credits to buy');
    await quantity.fill('50');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await page.locator('.field-error').first().waitFor();
    await expect(quantity.getAttribute('aria-invalid')).resolves.toBe('true');
    await quantity.fill('500');
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await page.waitForURL(/\/checkout\/cs_/);
    await expect(page.textContent('body')).resolves.toMatch(/Simulated checkout cs_/);
    await context.close();
  });

  it('a viewer signs in and finds no write control on any page', async () => {
    const email = `viewer-${Date.now()}@example.com`;
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
    for (const name of PAGES) {
      await open(page, name);
      seen[name] = await controlsBeyondReadOnly(page);
    }
    await page.goto(`${baseUrl()}/agents/${demo.agent_id}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await settled(page);
    seen['Agent detail'] = await controlsBeyondReadOnly(page);
    expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((name) => [name, []])));
    await shot(page, 'viewer-agent-1280');
    await context.close();
  }, 120_000);

  it('test chat: a parameter fills the greeting, the reply streams in, and the session is a call with channel "web"', async () => {
    const config = (await (await fetch(`${baseUrl()}/config.json`)).json()) as { relay_url: string };
    expect(config.relay_url).toBe(relayUrl);
    const { context, page } = await signedIn(demo.owner_email);
    // The upgrade carries a one-time ticket, never the user's token.
    const upgrades: string[] = [];
    page.on('websocket', (socket) => upgrades.push(socket.url()));
    await page.goto(`${baseUrl()}/agents/${demo.agent_id}`);
    await page.getByRole('button', { name: 'Test chat' }).click();
    const chat = page.getByRole('region', { name: 'Test chat' });
    // Before it starts: the chat's parameters (name and value rows) and the post-call choice.
    await chat.getByLabel('Parameter 1 name').fill('name');
    await chat.getByLabel('Parameter 1 value').fill('Sam');
    await chat.getByRole('button', { name: 'Add parameter' }).click();
    await chat.getByLabel('Parameter 2 name').fill('listing_id');
    await chat.getByLabel('Parameter 2 value').fill('bad\u202Evalue');
    await chat.getByRole('button', { name: 'Start chat' }).click();
    // A value breaking the text rules is the API's 422, shown before anything opens.
    await chat.locator('.field-error').waitFor();
    expect(upgrades).toEqual([]);
    await chat.getByRole('button', { name: 'Remove parameter 2' }).click();
    await expect(chat.locator('.field-error').count()).resolves.toBe(0);
    await expect(chat.getByRole('checkbox', { name: 'Run post-call actions' }).isChecked()).resolves.toBe(
      false,
    );
    await shot(page, 'test-chat-parameters-1280');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await chat.getByRole('button', { name: 'Start chat' }).click();
    await chat.getByText('Connected').waitFor();
    await chat.locator('.chat-agent').first().waitFor();
    await chat.locator('.chat-agent .typing').waitFor({ state: 'detached' });
    expect(await chat.locator('.chat-agent').first().textContent()).toBe(
      'Agent Hi Sam, this is Ava from Harbour Realty.',
    );
    expect(upgrades).toHaveLength(1);
    const upgrade = new URL(upgrades[0]);
    expect([...upgrade.searchParams.keys()].sort()).toEqual(['channel', 'ticket']);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shot(page, 'test-chat-open-1280');
    // The message box spans the chat's width (its Send button beside it).
    const [box, form] = await Promise.all([
      chat.getByLabel('Message').boundingBox(),
      chat.locator('form.chat-form').boundingBox(),
    ]);
    expect(box!.width).toBeGreaterThan(form!.width * 0.7);
    // Every state of the reply's line, as the page shows it, from before the message is sent: the
    // model simulator paces "tell me everything" (LONG_REPLY, a word a chunk), so it streams in.
    await page.evaluate(`(() => {
      const list = document.querySelector('[aria-label="Conversation"]');
      window.__replyStates = [];
      const record = () => {
        const line = list.querySelectorAll('li.chat-agent')[1];
        if (!line) return;
        const copy = line.cloneNode(true);
        copy.querySelectorAll('.who, .typing').forEach((e) => e.remove());
        const state = { text: copy.textContent.trim(), typing: line.querySelector('.typing') !== null };
        const last = window.__replyStates[window.__replyStates.length - 1];
        if (!last || last.text !== state.text || last.typing !== state.typing) window.__replyStates.push(state);
      };
      new MutationObserver(record).observe(list, { childList: true, subtree: true, characterData: true });
    })()`);
    await chat.getByLabel('Message').fill('Please tell me everything.');
    await chat.getByRole('button', { name: 'Send' }).click();
    await chat.locator('.chat-agent').nth(1).waitFor({ timeout: 30_000 });
    await chat.locator('.chat-agent .typing').waitFor({ state: 'detached', timeout: 30_000 });
    const states = (await page.evaluate('window.__replyStates')) as { text: string; typing: boolean }[];
    const final = states[states.length - 1];
    expect(final).toEqual({ text: LONG_REPLY, typing: false });
    // Before it, while the agent was still typing: each state a beginning of the final text, each
    // longer than the one before, and at least two of them short of the whole reply.
    const typing = states.slice(0, -1).filter((s) => s.typing && s.text !== '');
    for (const [i, state] of typing.entries()) {
      expect(LONG_REPLY.startsWith(state.text)).toBe(true);
      if (i > 0) expect(state.text.length).toBeGreaterThan(typing[i - 1].text.length);
    }
    expect(typing.filter((s) => s.text.length < LONG_REPLY.length).length).toBeGreaterThanOrEqual(2);
    // Shown once: one reply line besides the greeting.
    await expect(chat.locator('.chat-agent').count()).resolves.toBe(2);
    const callLink = await chat.getByRole('link', { name: /^Call call_/ }).textContent();
    const callId = (callLink ?? '').replace(/^Call /, '');
    await chat.getByRole('button', { name: 'Hang up' }).click();
    // Once it ended: no Hang up, no message box; Close removes the chat.
    await chat.getByText('Ended').waitFor();
    await expect(chat.getByRole('button', { name: 'Hang up' }).count()).resolves.toBe(0);
    await expect(chat.getByLabel('Message').count()).resolves.toBe(0);
    // Every agent line says something.
    for (const text of await chat.locator('.chat-agent').allTextContents())
      expect(text.replace(/^Agent/, '').trim()).not.toBe('');
    await shot(page, 'test-chat-ended-1280');
    const call = await waitFor(
      async () => {
        const found = await api('GET', `/api/v1/workspaces/${demo.workspace_id}/calls/${callId}`, {
          token: demo.owner_token,
        });
        return found.status === 200 && ['completed', 'failed'].includes(found.body.status)
          ? found.body
          : undefined;
      },
      { what: 'the test chat call to end' },
    );
    expect(call.status).toBe('completed');
    expect(call.channel).toBe('web');
    expect(call.parameters).toEqual({ name: 'Sam' });
    // The transcript holds the reply once, as it was shown.
    const replies = (call.transcript as { role: string; text: string }[]).filter(
      (t) => t.text === LONG_REPLY,
    );
    expect(replies).toHaveLength(1);
    await chat.getByRole('button', { name: 'Close' }).click();
    await chat.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Test chat' }).waitFor();
    await context.close();
  }, 90_000);
});
