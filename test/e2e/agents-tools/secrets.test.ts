import { describe, expect, it } from '@jest/globals';
import { api, type Json } from '../../helpers/http.js';
import { agentPath, createAgent, functionTool, newTenant, storedAgent } from './fixtures.js';

/**
 * Sealed header values are bounded (agents/tool-definitions.ts): a value sent again keeps its sealed
 * record (found by its HMAC), and values the tools no longer refer to are kept only within a budget
 * for earlier versions — the agent item does not grow with every PATCH.
 */

const URL_OK = 'http://127.0.0.1:9/tools/book';
/** Ten headers of 4,000 characters each: about 40 KB of values a PATCH. */
const headersOf = (seed: string) =>
  Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`x-key-${i}`, `${seed}-${i}-`.padEnd(4000, 'k')]));
const toolsWith = (headers: Record<string, string>) => [
  functionTool(URL_OK, { name: 'tool_a', headers: Object.fromEntries(Object.entries(headers).slice(0, 5)) }),
  functionTool(URL_OK, { name: 'tool_b', headers: Object.fromEntries(Object.entries(headers).slice(5)) }),
];
const itemBytes = (item: unknown) => Buffer.byteLength(JSON.stringify(item), 'utf8');

describe('sealed header values', () => {
  it('30 PATCHes re-sending the real values (and another field): the agent stays writable, its item flat', async () => {
    const tenant = await newTenant();
    const headers = headersOf('same');
    const agent = await createAgent(tenant, toolsWith(headers));
    const sizes: number[] = [];
    for (let i = 0; i < 30; i += 1) {
      const res = await api('PATCH', agentPath(tenant, agent.id as string), {
        token: tenant.owner.token,
        body: { prompt: `You book inspections (${i}).`, tools: toolsWith(headers) },
      });
      expect({ i, status: res.status }).toEqual({ i, status: 200 });
      const stored = await storedAgent(tenant.workspaceId, agent.id as string);
      expect(Object.keys(stored?.toolSecrets as Json)).toHaveLength(10);
      sizes.push(itemBytes(stored));
    }
    // Flat: the sealed values are the first ones; only the prompt, version and times changed.
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(200);
    const shown = (await api('GET', agentPath(tenant, agent.id as string), { token: tenant.owner.token }))
      .body;
    expect(shown.tools[0].headers['x-key-0']).toBe('••••kkkk');
  }, 120_000);

  it('30 PATCHes with new values each time: the values kept for earlier versions stay within their budget', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant, toolsWith(headersOf('v0')));
    const sizes: number[] = [];
    for (let i = 1; i <= 30; i += 1) {
      const res = await api('PATCH', agentPath(tenant, agent.id as string), {
        token: tenant.owner.token,
        body: { tools: toolsWith(headersOf(`v${i}`)) },
      });
      expect({ i, status: res.status }).toEqual({ i, status: 200 });
      sizes.push(itemBytes(await storedAgent(tenant.workspaceId, agent.id as string)));
    }
    // The current ten values (~55 KB sealed) and at most 96 KB of earlier ones, however many PATCHes.
    expect(Math.max(...sizes)).toBeLessThan(200 * 1024);
    expect(sizes.at(-1)! - sizes[10]).toBeLessThan(2 * 1024);
    // A version whose values are no longer kept cannot be restored (409); the agent is unchanged.
    const before = await storedAgent(tenant.workspaceId, agent.id as string);
    const restore = await api('POST', `${agentPath(tenant, agent.id as string)}/versions/1/restore`, {
      token: tenant.owner.token,
    });
    expect(restore.status).toBe(409);
    expect(restore.body.error).toMatch(/header values that are no longer kept/);
    expect(await storedAgent(tenant.workspaceId, agent.id as string)).toEqual(before);
    // The previous version's values are kept: it restores, and its masks read back.
    const previous = await api('POST', `${agentPath(tenant, agent.id as string)}/versions/30/restore`, {
      token: tenant.owner.token,
    });
    expect(previous.status).toBe(200);
    expect(previous.body.tools[0].headers['x-key-0']).toBe('••••kkkk');
  }, 120_000);
});
