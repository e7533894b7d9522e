import { callKey } from '../../functions/calling/call-shards.js';
import { CallEntity } from '../../functions/calling/entities.js';
import { readCall } from '../../functions/calling/lifecycle.js';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api, type Json } from '../helpers/http.js';
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
 * Agents that hand off, in the dashboard (system Chromium against the local stack's real API): the
 * demo receptionist's Handoffs (its target Sales as the demo made it; a second target added with when
 * to hand over and its context, saved with one PATCH; a viewer sees it read-only), and the call detail
 * of a call handed over (the "Handed to Sales — reason" line before Sales' first line, each agent line
 * labelled by its agent). axe-core finds nothing serious; screenshots under
 * .local/test-output/dashboard-handoffs/.
 */

describeWithBrowser('dashboard in Chromium: agents that hand off', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  let viewerEmail: string;
  const ws = () => `/api/v1/workspaces/${demo.workspace_id}`;
  const owner = () => ({ token: demo.owner_token });

  beforeAll(async () => {
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    viewerEmail = `viewer-handoffs-${Date.now()}@example.com`;
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
    kit = await DashboardBrowser.launch('dashboard-handoffs');
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
  });

  const openDemoAgent = async (email: string) => {
    const signed = await kit.signedIn(email, { path: `/agents/${demo.agent_id}` });
    await signed.page.getByRole('heading', { level: 1, name: 'Ava (demo receptionist)' }).waitFor();
    await settled(signed.page);
    return signed;
  };

  it("the demo receptionist's Handoffs: Sales as seeded; a target added and saved; a viewer reads it only", async () => {
    const { context, page } = await openDemoAgent(demo.owner_email);
    const form = page.getByRole('form', { name: 'Handoffs' });
    await expect(form.getByLabel('Hand over to').inputValue()).resolves.toBe(demo.sales_agent_id);
    await expect(form.getByLabel('When to hand over').inputValue()).resolves.toMatch(/asks for sales/);

    await form.getByRole('button', { name: 'Add handoff' }).click();
    const second = form.locator('fieldset.subform').nth(1);
    await expect(second.getByLabel('Hand over to').inputValue()).resolves.toBe(demo.agent_without_number_id);
    await second.getByLabel('When to hand over').fill('The caller asks about opening hours');
    await second.getByLabel('Context').selectOption('summary');
    const patched = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().endsWith(`${ws()}/agents/${demo.agent_id}`),
    );
    await form.getByRole('button', { name: 'Save handoffs' }).click();
    const response = await patched;
    expect(response.status()).toBe(200);
    expect(JSON.parse(response.request().postData() ?? '{}')).toEqual({
      handoffs: [
        {
          agent_id: demo.sales_agent_id,
          description: "The caller wants to buy, or asks about a listing's price or sale, or asks for sales",
          context: 'full',
        },
        {
          agent_id: demo.agent_without_number_id,
          description: 'The caller asks about opening hours',
          context: 'summary',
        },
      ],
    });
    await form.getByRole('status').filter({ hasText: 'Handoffs saved.' }).waitFor();
    const agent = await api('GET', `${ws()}/agents/${demo.agent_id}`, owner());
    expect(agent.body.handoffs.map((h: Json) => [h.agent_id, h.context])).toEqual([
      [demo.sales_agent_id, 'full'],
      [demo.agent_without_number_id, 'summary'],
    ]);
    // Every agent is a target now: nothing more to add.
    await expect(form.getByRole('button', { name: 'Add handoff' }).isDisabled()).resolves.toBe(true);
    expect({ violations: await seriousAxeViolations(page) }).toEqual({ violations: [] });
    await kit.shot(page, 'agent-handoffs-1280');
    await context.close();

    const viewer = await openDemoAgent(viewerEmail);
    const readOnly = viewer.page.getByRole('form', { name: 'Handoffs' });
    await expect(readOnly.getByLabel('Hand over to').first().isDisabled()).resolves.toBe(true);
    await expect(readOnly.getByRole('button').count()).resolves.toBe(0);
    expect(await controlsBeyondReadOnly(viewer.page)).toEqual([]);
    await viewer.context.close();
  });

  it('the call detail of a call handed over: the marker line and each agent line labelled', async () => {
    const started = await api('POST', `${ws()}/agents/${demo.agent_id}/start-call`, {
      token: demo.api_key,
      body: { to_phone: '+61491570156', parameters: { name: 'Sam' } },
    });
    expect(started.status).toBe(201);
    const callId = started.body.id as string;
    const ended = await waitFor(
      async () => {
        const call = await readCall(demo.workspace_id, callId);
        return call?.status === 'completed' && call.conversation && call.transcript?.length
          ? call
          : undefined;
      },
      { what: 'the call to end with its conversation', timeoutMs: 30_000 },
    );
    // The conversation engine's record of a handoff to Sales before the agent's last line.
    const last = (ended.transcript ?? []).map((t) => t.role).lastIndexOf('agent');
    const at = new Date(Date.parse(ended.connectedAt ?? ended.createdAt) + 1000).toISOString();
    await CallEntity.patch(callKey(demo.workspace_id, callId))
      .set({
        conversation: JSON.stringify({
          ...(JSON.parse(ended.conversation ?? '{}') as object),
          active_agent_id: demo.sales_agent_id,
          handoffs: [
            {
              from_agent_id: demo.agent_id,
              to_agent_id: demo.sales_agent_id,
              to_agent_version: 1,
              at,
              reason: 'caller asked for Sales',
              summary: 'wants to buy',
            },
          ],
        }),
        transcript: (ended.transcript ?? []).map((t, i) =>
          i === last ? { ...t, agentId: demo.sales_agent_id } : t,
        ),
      })
      .go();

    const { context, page } = await kit.signedIn(demo.owner_email, { path: `/calls/${callId}` });
    await settled(page);
    const transcript = page
      .getByRole('region', { name: 'Recording and transcript' })
      .locator('ol.transcript > li');
    // The agents' names come with the workspace's agents.
    await transcript.filter({ hasText: 'Handed to Sales' }).waitFor();
    await transcript.filter({ hasText: 'Ava (demo receptionist)' }).first().waitFor();
    const texts = await transcript.allTextContents();
    const marker = texts.findIndex((t) => t.includes('Handed to Sales — caller asked for Sales'));
    expect(marker).toBeGreaterThan(0);
    // The marker stands right before Sales' line; the agent lines before it are Ava's.
    expect(texts[marker + 1]).toContain('Sales');
    // At the time Sales took over: its first line's.
    const clockOf = (text: string) => /\d+:\d\d/.exec(text)?.[0];
    expect(clockOf(texts[marker])).toBe(clockOf(texts[marker + 1]));
    expect(
      texts.slice(0, marker).filter((t) => t.includes('Ava (demo receptionist)')).length,
    ).toBeGreaterThan(0);
    expect(texts.filter((t) => t.includes('Handed to'))).toHaveLength(1);
    expect({ violations: await seriousAxeViolations(page) }).toEqual({ violations: [] });
    await kit.shot(page, 'call-handed-over-1280');
    await context.close();
  });
});
