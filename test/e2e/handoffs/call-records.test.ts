import { callKey } from '../../../functions/calling/call-shards.js';
import { CallEntity } from '../../../functions/calling/entities.js';
import { finishCall, readCall } from '../../../functions/calling/lifecycle.js';
import { api, type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  createAgent,
  newTenant,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  ws,
} from '../calling/fixtures.js';

/**
 * What a call shows of agents that hand off (docs/api.md "Agents that hand off"): on a call without
 * handoffs, the call detail's defaults (`active_agent_id` its agent, `handoffs: []`, each agent line and
 * tool call the call's agent); and a recorded conversation with a handoff, as the conversation engine
 * writes it at the call's end, read back through the call detail and counted in analytics' `handoffs`
 * exactly once however often the call is finished again (a redelivered callback, the sweeper).
 */

const analytics = async (tenant: Awaited<ReturnType<typeof newTenant>>, query: string) =>
  (await api('GET', `${ws(tenant)}/analytics/calls${query}`, { token: tenant.owner.token })).body as Json;

/** A call to the answered scenario, ended and with its conversation recorded. */
async function endedCall(ready: Awaited<ReturnType<typeof readyToCall>>) {
  const started = await api('POST', `${ws(ready.tenant)}/agents/${ready.agent.id}/start-call`, {
    token: ready.tenant.owner.token,
    body: { to_phone: TEST_NUMBERS.answered, parameters: { name: 'Sam', agency: 'Harbour Realty' } },
  });
  expect(started.status).toBe(201);
  return waitForCall(
    ready.tenant,
    started.body.id,
    (call) =>
      call.status === 'completed' &&
      call.transcript.length > 0 &&
      call.conversation_ended_by !== null &&
      call.latency.turns > 0,
    30_000,
  );
}

describe('a call without handoffs', () => {
  test('its detail defaults: the active agent is its agent, no handoffs, every agent line and tool call its agent', async () => {
    const ready = await readyToCall();
    const call = await endedCall(ready);
    expect(call.active_agent_id).toBe(ready.agent.id);
    expect(call.handoffs).toEqual([]);
    const agentLines = call.transcript.filter((line: Json) => line.role === 'agent');
    expect(agentLines.length).toBeGreaterThan(0);
    for (const line of agentLines) expect(line.agent_id).toBe(ready.agent.id);
    for (const line of call.transcript.filter((l: Json) => l.role === 'user'))
      expect(line).not.toHaveProperty('agent_id');
    expect(call.tool_calls.length).toBeGreaterThan(0);
    for (const toolCall of call.tool_calls) expect(toolCall.agent_id).toBe(ready.agent.id);
    // A viewer reads the same; another organisation does not find the call.
    const viewer = await addMember(ready.tenant, 'viewer');
    const asViewer = await api('GET', `${ws(ready.tenant)}/calls/${call.id}`, { token: viewer.token });
    expect(asViewer.body).toMatchObject({ active_agent_id: ready.agent.id, handoffs: [] });
    const other = await newTenant();
    expect(
      (await api('GET', `${ws(ready.tenant)}/calls/${call.id}`, { token: other.owner.token })).status,
    ).toBe(404);
    // Analytics: no call handed over.
    await waitForQuiescence();
    expect((await analytics(ready.tenant, '')).totals).toMatchObject({ calls: 1, handoffs: 0 });
  });
});

describe('a call with a handoff recorded', () => {
  test('the detail shows it; analytics count the call once, on its own agent, however often it is finished again', async () => {
    const ready = await readyToCall();
    const sales = await createAgent(ready.tenant, { name: 'Sales' });
    const ended = await endedCall(ready);
    await waitForQuiescence();

    // What the conversation engine writes at the call's end when the caller was handed to Sales
    // (conversation/storage/record.ts): the conversation's additive fields and each agent line's agent.
    const stored = await readCall(ready.tenant.workspaceId, ended.id);
    if (!stored?.conversation || !stored.transcript) throw new Error('the call has no recorded conversation');
    const at = stored.endedAt ?? new Date().toISOString();
    const conversation = JSON.parse(stored.conversation) as Record<string, unknown>;
    const lastAgentLine = stored.transcript.map((t) => t.role).lastIndexOf('agent');
    await CallEntity.patch(callKey(ready.tenant.workspaceId, ended.id as string))
      .set({
        conversation: JSON.stringify({
          ...conversation,
          active_agent_id: sales.id,
          handoffs: [
            {
              from_agent_id: ready.agent.id,
              to_agent_id: sales.id,
              to_agent_version: 1,
              at,
              reason: 'caller asked for Sales',
              summary: "I'd like to speak to sales about a listing",
            },
          ],
        }),
        transcript: stored.transcript.map((t, i) => (i === lastAgentLine ? { ...t, agentId: sales.id } : t)),
      })
      .go();

    const detail = (
      await api('GET', `${ws(ready.tenant)}/calls/${ended.id}`, { token: ready.tenant.owner.token })
    ).body as Json;
    expect(detail.agent_id).toBe(ready.agent.id);
    expect(detail.active_agent_id).toBe(sales.id);
    expect(detail.handoffs).toEqual([
      {
        from_agent_id: ready.agent.id,
        to_agent_id: sales.id,
        to_agent_version: 1,
        at,
        reason: 'caller asked for Sales',
        summary: "I'd like to speak to sales about a listing",
      },
    ]);
    expect(detail.transcript[lastAgentLine].agent_id).toBe(sales.id);
    const earlier = detail.transcript.filter(
      (l: Json, i: number) => l.role === 'agent' && i !== lastAgentLine,
    );
    for (const line of earlier) expect(line.agent_id).toBe(ready.agent.id);

    // Finished again, three times at once and once more (a redelivered callback, the sweeper): counted once.
    const call = await readCall(ready.tenant.workspaceId, ended.id);
    if (!call) throw new Error('call gone');
    await Promise.all([finishCall(call), finishCall(call), finishCall(call)]);
    await finishCall((await readCall(ready.tenant.workspaceId, ended.id)) ?? call);
    const totals = (await analytics(ready.tenant, '')).totals;
    expect(totals).toMatchObject({ calls: 1, handoffs: 1 });
    const byAgent = (await analytics(ready.tenant, '?group_by=agent')).items as Json[];
    expect(byAgent.map((item) => [item.key, item.calls, item.handoffs])).toEqual([[ready.agent.id, 1, 1]]);
    const byStatus = (await analytics(ready.tenant, '?group_by=status')).items as Json[];
    expect(byStatus.find((item) => item.key === 'completed')?.handoffs).toBe(1);
    expect((await readCall(ready.tenant.workspaceId, ended.id))?.handoffsCounted).toBe(true);
  });
});
