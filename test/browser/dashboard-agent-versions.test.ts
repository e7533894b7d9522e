import { receiveCall } from '../helpers/cli.js';
import type { Page } from 'playwright-core';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, baseUrl, type Json } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { tokenFor } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';
import {
  controlsBeyondReadOnly,
  DashboardBrowser,
  describeWithBrowser,
  seriousAxeViolations,
  settled,
} from './dashboard-kit.js';

/**
 * Agents that act, in the dashboard (system Chromium against the local stack's real API): the agent
 * page's Versions (two prompt edits → three versions with what changed → view version 1 → Restore →
 * version 4 with version 1's prompt; a viewer sees no Restore), its Transfer section (cold saved; warm
 * offers the whisper and shows the API's answer at the field), the call detail of a call a machine
 * answered (answered by, voicemail left, the agent version linked; an unknown call is "Call not
 * found"), and the campaign page (calling window, next dial and why, contacts with their attempts and
 * outcomes, upload warnings, the voicemail count). axe-core finds nothing serious; screenshots at
 * 1280 and 390 px under .local/test-output/dashboard-agent-versions/.
 */

const MACHINE = '+61491570117';
const TRANSFER_TARGET = '+61491570119';
const PROMPT_1 = 'You are Ava of Harbour Realty. Book inspections for {{name}}.';
const PROMPT_2 = 'You are Ava of Harbour Realty. Book inspections and open homes for {{name}}.';
const PROMPT_3 = 'You are Ava of Harbour Realty. Book inspections, open homes and appraisals for {{name}}.';
const CALLER = '+61491570163';
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

describeWithBrowser(
  'dashboard in Chromium: agent versions, transfer, voicemail call and campaign page',
  () => {
    let kit: DashboardBrowser;
    let demo: SeedResult;
    let agentId: string;
    let viewerEmail: string;
    const ws = () => `/api/v1/workspaces/${demo.workspace_id}`;
    const owner = () => ({ token: demo.owner_token });
    const get = async (path: string): Promise<Json> => {
      const res = await api('GET', `${ws()}${path}`, owner());
      expect(res.status).toBe(200);
      return res.body;
    };

    beforeAll(async () => {
      demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
      const agent = await api('POST', `${ws()}/agents`, {
        ...owner(),
        body: { name: 'Versioned agent', prompt: PROMPT_1 },
      });
      expect(agent.status).toBe(201);
      expect(agent.body.version).toBe(1);
      agentId = agent.body.id;
      // The demo agent (it has a number) leaves a message on a machine.
      const voicemail = await api('PATCH', `${ws()}/agents/${demo.agent_id}`, {
        ...owner(),
        body: {
          voicemail: { action: 'leave_message', message: 'Hi {{name}}, Ava here. Please call us back.' },
        },
      });
      expect(voicemail.status).toBe(200);
      viewerEmail = `viewer-versions-${Date.now()}@example.com`;
      const invited = await api('POST', `/api/v1/organisations/${demo.organisation_id}/invitations`, {
        ...owner(),
        body: {
          email: viewerEmail,
          role: 'regular',
          workspaces: [{ workspace_id: demo.workspace_id, role: 'viewer' }],
        },
      });
      expect(invited.status).toBe(201);
      const accepted = await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, {
        token: await tokenFor(viewerEmail),
      });
      expect(accepted.status).toBe(200);
      kit = await DashboardBrowser.launch('dashboard-agent-versions');
    }, 120_000);
    afterAll(async () => {
      await kit?.close();
    });

    const openAgent = async (email: string, query = '') => {
      const signed = await kit.signedIn(email, { path: `/agents/${agentId}` });
      if (query) await signed.page.goto(`${baseUrl()}/agents/${agentId}${query}`);
      await signed.page.getByRole('heading', { level: 1, name: 'Versioned agent' }).waitFor();
      await settled(signed.page);
      return signed;
    };
    /** Clicks Save and returns the status of the PATCH it sent. */
    const save = async (page: Page): Promise<number> => {
      const patched = page.waitForResponse(
        (response) =>
          response.request().method() === 'PATCH' && response.url().endsWith(`${ws()}/agents/${agentId}`),
      );
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      return (await patched).status();
    };
    /** axe-core at 1280 px (nothing serious), then screenshots at 1280 and 390 px. */
    const checkAndPhotograph = async (page: Page, name: string) => {
      await page.setViewportSize({ width: 1280, height: 900 });
      expect({ page: name, violations: await seriousAxeViolations(page) }).toEqual({
        page: name,
        violations: [],
      });
      await kit.shot(page, `${name}-1280`);
      await page.setViewportSize({ width: 390, height: 900 });
      expect({ page: `${name} at 390 px`, violations: await seriousAxeViolations(page) }).toEqual({
        page: `${name} at 390 px`,
        violations: [],
      });
      // No wider than the screen (a wide table scrolls inside its own box).
      await expect(page.evaluate('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      await kit.shot(page, `${name}-390`);
      await page.setViewportSize({ width: 1280, height: 900 });
    };
    const versionRows = (page: Page) =>
      page
        .getByRole('region', { name: 'Versions' })
        .getByRole('table', { name: 'Versions' })
        .locator('tbody tr');
    const cell = (row: ReturnType<typeof versionRows>, label: string) =>
      row.locator(`td[data-label="${label}"]`);

    it('two prompt edits make versions 2 and 3 (what changed: prompt); version 1 viewed and restored → version 4 with its prompt', async () => {
      const { context, page } = await openAgent(demo.owner_email);
      const prompt = page.getByLabel('Prompt', { exact: true });
      for (const text of [PROMPT_2, PROMPT_3]) {
        await prompt.fill(text);
        expect(await save(page)).toBe(200);
        await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      }
      await waitFor(async () => (await versionRows(page).count()) === 3, { what: 'three versions listed' });
      await expect(cell(versionRows(page), 'Version').allTextContents()).resolves.toEqual([
        '3 current',
        '2',
        '1',
      ]);
      await expect(cell(versionRows(page), 'What changed').allTextContents()).resolves.toEqual([
        'prompt',
        'prompt',
        'created',
      ]);
      await page.getByRole('link', { name: 'Version 3', exact: true }).waitFor();
      await expect(cell(versionRows(page), 'By').allTextContents()).resolves.toEqual(['you', 'you', 'you']);

      await page.getByRole('link', { name: 'View version 1', exact: true }).click();
      const v1 = page.getByRole('region', { name: 'Version 1', exact: true });
      await expect(v1.getByLabel('Prompt of this version').textContent()).resolves.toBe(PROMPT_1);
      await expect(page.url()).toMatch(new RegExp(`/agents/${agentId}\\?version=1#versions$`));
      await settled(page);
      await checkAndPhotograph(page, 'agent-version-1');

      await v1.getByRole('button', { name: 'Restore version 1' }).click();
      await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 4.' }).waitFor();
      // The form holds the restored agent; the header says version 4; the version view is closed.
      await expect(prompt.inputValue()).resolves.toBe(PROMPT_1);
      await page.getByRole('link', { name: 'Version 4', exact: true }).waitFor();
      await expect(page.getByRole('region', { name: 'Version 1', exact: true }).count()).resolves.toBe(0);
      await waitFor(async () => (await versionRows(page).count()) === 4, { what: 'four versions listed' });
      await expect(cell(versionRows(page).first(), 'What changed').textContent()).resolves.toBe(
        'restored from version 1: prompt',
      );

      // The API agrees, and the restore made exactly one version.
      const agent = await get(`/agents/${agentId}`);
      expect(agent).toMatchObject({ version: 4, prompt: PROMPT_1 });
      const versions = await get(`/agents/${agentId}/versions`);
      expect(versions.items.map((v: Json) => v.version)).toEqual([4, 3, 2, 1]);
      expect(versions.items[0]).toMatchObject({ changed: ['prompt'], restored_from: 1 });
      await checkAndPhotograph(page, 'agent-versions-restored');
      await context.close();
    }, 180_000);

    it('a viewer reads the versions and opens one, and sees no Restore and no other write control', async () => {
      const { context, page } = await openAgent(viewerEmail, '?version=2#versions');
      const v2 = page.getByRole('region', { name: 'Version 2', exact: true });
      await expect(v2.getByLabel('Prompt of this version').textContent()).resolves.toBe(PROMPT_2);
      await waitFor(async () => (await versionRows(page).count()) === 4, { what: 'four versions listed' });
      await expect(page.getByRole('button', { name: /^Restore/ }).count()).resolves.toBe(0);
      // Made by the owner: the viewer sees the owner's email.
      await expect(cell(versionRows(page), 'By').allTextContents()).resolves.toEqual(
        Array(4).fill(demo.owner_email),
      );
      expect(await controlsBeyondReadOnly(page)).toEqual([]);
      await checkAndPhotograph(page, 'viewer-agent-version-2');
      await context.close();
    }, 90_000);

    it('Transfer: saves a cold transfer; warm offers the whisper with {{summary}} and shows the API answer at the field', async () => {
      const { context, page } = await openAgent(demo.owner_email);
      const before = await get(`/agents/${agentId}`);
      await page.getByLabel('Transfer number').fill(TRANSFER_TARGET);
      await page.getByLabel('Transfer mode').selectOption('cold');
      await expect(page.getByLabel('Whisper').count()).resolves.toBe(0);
      expect(await save(page)).toBe(200);
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const cold = await get(`/agents/${agentId}`);
      expect(cold).toMatchObject({
        transfer: { phone_number: TRANSFER_TARGET, mode: 'cold', whisper: null },
        transfer_phone_number: TRANSFER_TARGET,
        version: before.version + 1,
      });
      expect((await get(`/agents/${agentId}/versions`)).items[0].changed).toEqual(
        expect.arrayContaining(['transfer']),
      );

      await page.getByLabel('Transfer mode').selectOption('warm');
      const whisper = page.getByLabel('Whisper');
      await whisper.waitFor();
      await expect(
        page.locator('.field').filter({ has: whisper }).locator('.hint').textContent(),
      ).resolves.toContain('{{summary}}');
      await whisper.fill('A caller for you: {{summary}}');
      const status = await save(page);
      if (status === 422) {
        // Warm transfers are refused until the service has them: said at the mode, nothing changed.
        const error = page
          .locator('.field')
          .filter({ has: page.getByLabel('Transfer mode') })
          .locator('.field-error');
        await expect(error.textContent()).resolves.toContain('warm transfers are not available yet');
        await expect(page.getByLabel('Transfer mode').getAttribute('aria-invalid')).resolves.toBe('true');
        const after = await get(`/agents/${agentId}`);
        expect(after.transfer).toEqual(cold.transfer);
        expect(after.version).toBe(cold.version);
      } else {
        expect(status).toBe(200);
        expect((await get(`/agents/${agentId}`)).transfer).toEqual({
          phone_number: TRANSFER_TARGET,
          mode: 'warm',
          whisper: 'A caller for you: {{summary}}',
        });
      }
      await checkAndPhotograph(page, 'agent-transfer');
      await context.close();
    }, 90_000);

    it('the call detail of a call a machine answered: titled by the number, answered by a machine, voicemail left, its agent version linked; an inbound call titled by its caller', async () => {
      const { context, page } = await kit.signedIn(demo.owner_email, { path: `/agents/${demo.agent_id}` });
      await settled(page);
      const agentVersion = (await get(`/agents/${demo.agent_id}`)).version as number;
      await page.getByLabel('To phone').fill(MACHINE);
      await page.getByLabel('Parameters').fill('name=Sam');
      await page.getByRole('button', { name: 'Start call' }).click();
      await page.waitForURL(/\/calls\/call_/);
      const callId = new URL(page.url()).pathname.split('/').at(-1) as string;
      await page.getByRole('heading', { level: 1, name: `Call to ${MACHINE}` }).waitFor();
      await page
        .getByRole('status', { name: 'Call status' })
        .filter({ hasText: /^completed$/ })
        .waitFor({ timeout: 60_000 });
      const fact = (name: string) => page.locator(`dl.facts dt:text-is("${name}") + dd`).first();
      await fact('Answered by')
        .filter({ hasText: /^a machine/ })
        .waitFor({ timeout: 30_000 });
      await fact('Voicemail left').filter({ hasText: 'yes' }).waitFor({ timeout: 30_000 });
      await expect(fact('Status').textContent()).resolves.toContain('(Voicemail)');
      const versionLink = fact('Agent version').getByRole('link', { name: `Version ${agentVersion}` });
      await expect(versionLink.getAttribute('href')).resolves.toBe(
        `/agents/${demo.agent_id}?version=${agentVersion}#versions`,
      );
      // The API says the same, of this one call.
      const call = await get(`/calls/${callId}`);
      expect(call).toMatchObject({
        direction: 'outbound',
        remote_phone: MACHINE,
        answered_by: 'machine',
        voicemail_message_left: true,
        end_reason: 'voicemail',
        agent_version: agentVersion,
      });
      const calls = await get(`/calls?agent_id=${demo.agent_id}`);
      expect(calls.items.filter((c: Json) => c.to_phone === MACHINE)).toHaveLength(1);
      await settled(page);
      await checkAndPhotograph(page, 'call-detail-voicemail');

      // The version link opens that version on the agent page.
      await versionLink.click();
      await page.getByRole('region', { name: `Version ${agentVersion}`, exact: true }).waitFor();
      await page.getByText('This is the version the agent runs now.').waitFor();

      // An inbound call is titled by its caller (the telephony simulator dials the demo number).
      const inbound = { call_id: await receiveCall(CALLER, demo.phone_number) };
      await page.goto(`${baseUrl()}/calls/${inbound.call_id}`);
      await page.getByRole('heading', { level: 1, name: `Call from ${CALLER}` }).waitFor();
      expect(await get(`/calls/${inbound.call_id}`)).toMatchObject({
        direction: 'inbound',
        remote_phone: CALLER,
      });

      // A call that is not there: said so, and no "Try again".
      await page.goto(`${baseUrl()}/calls/call_01JD8X3T6QW5R2K9M4N7P1B3C5`);
      await page.getByRole('heading', { level: 1, name: 'Call not found' }).waitFor();
      await expect(page.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
      await kit.shot(page, 'call-not-found-1280');
      await context.close();
    }, 150_000);

    it('the campaign page: calling window, the next dial and why, contacts with attempts and outcomes, upload warnings, voicemails counted', async () => {
      // A window that opens only three days from now: nothing is dialled, and the page says why.
      const day = WEEKDAYS[(new Date().getUTCDay() + 3) % 7];
      const waiting = await api('POST', `${ws()}/campaigns`, {
        ...owner(),
        body: {
          name: 'Window closed',
          agent_id: demo.agent_id,
          calling_window: { timezone: 'Australia/Sydney', days: [day], start: '09:00', end: '17:00' },
        },
      });
      expect(waiting.status).toBe(201);
      const uploaded = await uploadCsv(waiting.body.id, 'phone,name\n+61491570150,Sam\n+61491570151,Kim\n');
      expect(uploaded).toMatchObject({ status: 'completed', counts: { created: 2 } });
      expect(
        (
          await api('PATCH', `${ws()}/campaigns/${waiting.body.id}`, {
            ...owner(),
            body: { status: 'running' },
          })
        ).status,
      ).toBe(200);
      const running = await get(`/campaigns/${waiting.body.id}`);
      expect(running.next_dial_reason).toMatch(/^window opens /);
      expect(running.warnings.length).toBeGreaterThan(0);

      const { context, page } = await kit.signedIn(demo.owner_email, {
        path: `/campaigns/${waiting.body.id}`,
      });
      await page.getByRole('heading', { level: 1, name: 'Window closed' }).waitFor();
      await settled(page);
      const next = page.getByRole('region', { name: 'Next call' });
      await expect(next.getByLabel('Next dial reason').textContent()).resolves.toBe(running.next_dial_reason);
      await expect(next.locator('dt:text-is("Calling window") + dd').textContent()).resolves.toContain(
        '09:00–17:00, Australia/Sydney time',
      );
      const contacts = page.getByRole('table', { name: 'Campaign contacts' }).locator('tbody tr');
      await waitFor(async () => (await contacts.count()) === 2, { what: 'two contacts listed' });
      await expect(contacts.locator('td[data-label="State"]').allTextContents()).resolves.toEqual([
        'pending',
        'pending',
      ]);
      await expect(contacts.locator('td[data-label="Attempts"]').allTextContents()).resolves.toEqual([
        '0',
        '0',
      ]);
      const warnings = page.getByRole('region', { name: 'Upload warnings' });
      await warnings.getByText('{{listing_address}}').waitFor();
      await checkAndPhotograph(page, 'campaign-window-closed');

      // A machine among the contacts: its attempt's outcome is voicemail and the progress counts it.
      const machine = await api('POST', `${ws()}/campaigns`, {
        ...owner(),
        body: {
          name: 'Machine campaign',
          agent_id: demo.agent_id,
          calling_window: { timezone: 'UTC', days: [...WEEKDAYS], start: '00:00', end: '23:59' },
        },
      });
      expect(machine.status).toBe(201);
      const csv = `phone,name,listing_id,listing_address,listing_price\n${MACHINE},Sam,L1,12 Harbour St,$900k\n`;
      expect(await uploadCsv(machine.body.id, csv)).toMatchObject({ status: 'completed' });
      expect(
        (
          await api('PATCH', `${ws()}/campaigns/${machine.body.id}`, {
            ...owner(),
            body: { status: 'running' },
          })
        ).status,
      ).toBe(200);
      await page.goto(`${baseUrl()}/campaigns/${machine.body.id}`);
      await page.getByRole('heading', { level: 1, name: 'Machine campaign' }).waitFor();
      await page
        .getByRole('status', { name: 'Campaign status' })
        .filter({ hasText: /^completed$/ })
        .waitFor({ timeout: 180_000 });
      await page.locator('dl.facts dt:text-is("Voicemail") + dd').filter({ hasText: /^1$/ }).waitFor();
      const row = page.getByRole('table', { name: 'Campaign contacts' }).locator('tbody tr');
      await row
        .locator('td[data-label="Outcome"] a')
        .filter({ hasText: 'voicemail' })
        .waitFor({ timeout: 30_000 });
      await expect(row.locator('td[data-label="Attempts"]').allTextContents()).resolves.toEqual(['1']);
      const done = await get(`/campaigns/${machine.body.id}`);
      expect(done.progress).toMatchObject({ total: 1, voicemail: 1 });
      await expect(page.getByRole('region', { name: 'Upload warnings' }).count()).resolves.toBe(0);
      await settled(page);
      await checkAndPhotograph(page, 'campaign-voicemail');
      await context.close();
      expect(kit.cspViolations).toEqual([]);
    }, 300_000);

    /** Uploads a CSV (the body starts the job at once) and waits for its job to end. */
    async function uploadCsv(campaignId: string, csv: string): Promise<Json> {
      const res = await api('POST', `${ws()}/campaigns/${campaignId}/uploads`, {
        ...owner(),
        rawBody: csv,
        headers: { 'content-type': 'text/csv' },
      });
      expect(res.status).toBe(202);
      return waitFor(
        async () => {
          const job = await get(`/campaigns/${campaignId}/jobs/${res.body.id}`);
          return job.status === 'completed' || job.status === 'failed' ? job : undefined;
        },
        { what: 'the upload to finish', timeoutMs: 60_000 },
      );
    }
  },
);
