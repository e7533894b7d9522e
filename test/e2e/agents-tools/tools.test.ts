import { describe, expect, it } from '@jest/globals';
import { api, type Json } from '../../helpers/http.js';
import {
  addMember,
  agentCount,
  agentPath,
  createAgent,
  functionTool,
  newTenant,
  storedAgent,
  ws,
} from './fixtures.js';

/**
 * The agent's `tools` field (docs/api.md "Agent tools") through the real gateway: every refusal is a
 * 422 at the field and stores nothing; header values are stored sealed and read back masked; a mask
 * sent back keeps its value; tenancy and roles on the tool routes.
 */

const URL_OK = 'http://127.0.0.1:9/tools/book';

describe('agent tools: refusals', () => {
  const big = (n: number) => 'x'.repeat(n);
  const cases: [string, Json[], RegExp][] = [
    [
      'parameters not an object schema',
      [functionTool(URL_OK, { parameters: { type: 'string' } })],
      /JSON Schema of type \\"object\\"/,
    ],
    [
      'parameters not a valid schema',
      [functionTool(URL_OK, { parameters: { type: 'object', properties: { a: { type: 'banana' } } } })],
      /parameters is not a valid JSON Schema/,
    ],
    ['a built-in tool name', [functionTool(URL_OK, { name: 'end_call' })], /built-in tool/],
    ['a name that is not lower-case', [functionTool(URL_OK, { name: 'Book' })], /lower-case name/],
    [
      'two tools of one name',
      [functionTool(URL_OK), { type: 'mcp', name: 'book_inspection', url: URL_OK }],
      /each tool name may appear once/,
    ],
    [
      '21 tools',
      Array.from({ length: 21 }, (_, i) => functionTool(URL_OK, { name: `tool_${i}` })),
      /at most 20 items/,
    ],
    [
      'more than 64 KB of tools',
      Array.from({ length: 5 }, (_, i) =>
        functionTool(URL_OK, {
          name: `tool_${i}`,
          parameters: { type: 'object', description: big(15_000) },
        }),
      ),
      /at most 64 KB of JSON altogether/,
    ],
    [
      'parameters over 16 KB',
      [functionTool(URL_OK, { parameters: { type: 'object', description: big(17_000) } })],
      /at most 16 KB/,
    ],
    ['a Host header', [functionTool(URL_OK, { headers: { Host: 'evil.example' } })], /set by the service/],
    [
      'a webhook- header',
      [functionTool(URL_OK, { headers: { 'webhook-signature': 'v1,x' } })],
      /set by the service/,
    ],
    [
      'CR/LF in a header value',
      [functionTool(URL_OK, { headers: { 'x-api-key': 'abc\r\nx-evil: 1' } })],
      /must not contain CR or LF/,
    ],
    [
      'eleven headers',
      [
        functionTool(URL_OK, {
          headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-h${i}`, 'v'])),
        }),
      ],
      /at most 10 headers/,
    ],
    ['timeout under 500 ms', [functionTool(URL_OK, { timeout_ms: 499 })], /greater than or equal to 500/],
    ['timeout over 30 s', [functionTool(URL_OK, { timeout_ms: 30_001 })], /less than or equal to 30000/],
    ['a private url', [functionTool('http://10.0.0.5/tools')], /loopback, private or link-local/],
    ['a link-local url', [functionTool('http://169.254.169.254/latest')], /loopback, private or link-local/],
    ['not a url', [functionTool('book it')], /url must be a URL/],
    [
      'an MCP name over 20 characters',
      [{ type: 'mcp', name: 'a_very_long_server_name', url: URL_OK }],
      /at most 20/,
    ],
    ['an unknown type', [{ type: 'script', name: 'x', url: URL_OK }], /Invalid discriminator/],
    [
      'NUL in static_arguments',
      [functionTool(URL_OK, { static_arguments: { office: 'no\u0000rth' } })],
      /control characters other than tab and line breaks \(found U\+0000\)/,
    ],
    [
      'a bidi override deep in static_arguments',
      [functionTool(URL_OK, { static_arguments: { rooms: [{ label: 'abc\u202edef' }] } })],
      /bidirectional control characters \(found U\+202E\)/,
    ],
    [
      'a mask that matches no stored value',
      [functionTool(URL_OK, { headers: { authorization: '••••abcd' } })],
      /mask of this header's stored value/,
    ],
  ];

  it.each(cases)('%s: 422 on create and on PATCH, nothing stored', async (_what, tools, message) => {
    const tenant = await newTenant();
    const kept = await createAgent(tenant, [
      functionTool(URL_OK, { headers: { 'x-api-key': 'secret-1234' } }),
    ]);
    const before = await storedAgent(tenant.workspaceId, kept.id);

    const created = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Refused', tools },
    });
    expect(created.status).toBe(422);
    expect(JSON.stringify(created.body)).toMatch(message);
    expect(created.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'tools']);
    expect(await agentCount(tenant)).toBe(1);

    const patched = await api('PATCH', agentPath(tenant, kept.id), {
      token: tenant.owner.token,
      body: { tools },
    });
    expect(patched.status).toBe(422);
    expect(JSON.stringify(patched.body)).toMatch(message);
    expect(await storedAgent(tenant.workspaceId, kept.id)).toEqual(before);
  });
});

describe('agent tools: no 422 shows a header value', () => {
  const SECRET = 'Bearer sk_live_never_echoed_8642';
  const withSecret = (i: number, extra: Record<string, unknown> = {}) =>
    functionTool(URL_OK, { name: `tool_${i}`, headers: { authorization: SECRET }, ...extra });
  const cases: [string, Json[]][] = [
    ['21 tools', Array.from({ length: 21 }, (_, i) => withSecret(i))],
    [
      '11 headers',
      [
        withSecret(0, {
          headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-h${i}`, SECRET])),
        }),
      ],
    ],
    [
      'an unknown tool type',
      [{ type: 'script', name: 'x', url: URL_OK, headers: { authorization: SECRET } }],
    ],
    ['a tool without its description', [{ ...withSecret(0), description: undefined }]],
    ['CR/LF in the value', [withSecret(0, { headers: { authorization: `${SECRET}\r\nx: 1` } })]],
    [
      'a mask-like value that matches nothing',
      [withSecret(0, { headers: { authorization: `••••${SECRET}` } })],
    ],
  ];

  it.each(cases)('%s: 422 on create and PATCH, the value nowhere in it', async (_what, tools) => {
    const tenant = await newTenant();
    const kept = await createAgent(tenant, []);
    const created = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Refused', tools },
    });
    const patched = await api('PATCH', agentPath(tenant, kept.id), {
      token: tenant.owner.token,
      body: { tools },
    });
    for (const res of [created, patched]) {
      expect(res.status).toBe(422);
      expect(res.text).not.toContain('sk_live_never_echoed');
    }
  });
});

describe('agent tools: stored and shown', () => {
  it('header values are sealed, read back masked, and a mask sent back keeps the value', async () => {
    const tenant = await newTenant();
    const mcp = {
      type: 'mcp',
      name: 'crm',
      url: URL_OK,
      headers: { authorization: 'Bearer mcp-token-9876' },
    };
    const agent = await createAgent(tenant, [
      functionTool(URL_OK, {
        headers: { 'X-Api-Key': 'sk_live_secret_4321', 'x-tenant': 'acme' },
        static_arguments: { office: 'north' },
        speak_during: 'One moment.',
      }),
      mcp,
    ]);
    expect(agent.tools).toEqual([
      {
        type: 'function',
        name: 'book_inspection',
        description: 'Book an inspection',
        parameters: expect.any(Object),
        url: URL_OK,
        headers: { 'X-Api-Key': '••••4321', 'x-tenant': '••••acme' },
        static_arguments: { office: 'north' },
        timeout_ms: 8000,
        speak_during: 'One moment.',
      },
      { type: 'mcp', name: 'crm', url: URL_OK, headers: { authorization: '••••9876' }, timeout_ms: 8000 },
    ]);
    const read = await api('GET', agentPath(tenant, agent.id), { token: tenant.owner.token });
    expect(read.body.tools).toEqual(agent.tools);

    // Stored: no plain value anywhere in the item; each value by its own id.
    const item = await storedAgent(tenant.workspaceId, agent.id);
    const raw = JSON.stringify(item);
    for (const plain of ['sk_live_secret_4321', 'mcp-token-9876']) expect(raw).not.toContain(plain);
    const secretIds = Object.keys(item?.toolSecrets as object);
    expect(secretIds).toHaveLength(3);
    for (const id of secretIds) expect(id).toMatch(/^tsec_[0-9A-HJKMNP-TV-Z]{26}$/);

    // The masks sent back keep the stored values (same ids); a new value replaces one.
    const roundTrip = await api('PATCH', agentPath(tenant, agent.id), {
      token: tenant.owner.token,
      body: {
        tools: [
          { ...agent.tools[0], headers: { 'X-Api-Key': '••••4321', 'x-tenant': 'globex' } },
          agent.tools[1],
        ],
      },
    });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body.tools[0].headers).toEqual({ 'X-Api-Key': '••••4321', 'x-tenant': '••••obex' });
    const after = await storedAgent(tenant.workspaceId, agent.id);
    const tools = after?.tools as Json[];
    const before = item?.tools as Json[];
    expect(tools[0].headers['X-Api-Key']).toBe(before[0].headers['X-Api-Key']);
    expect(tools[0].headers['x-tenant']).not.toBe(before[0].headers['x-tenant']);
    expect(tools[1].headers.authorization).toBe(before[1].headers.authorization);
    // The replaced value stays too: version 1 still refers to it (docs/versions.md).
    expect(Object.keys(after?.toolSecrets as object).sort()).toEqual(
      [
        tools[0].headers['X-Api-Key'],
        tools[0].headers['x-tenant'],
        tools[1].headers.authorization,
        before[0].headers['x-tenant'],
      ].sort(),
    );

    // PATCH without tools leaves them; tools: [] removes them all.
    const renamed = await api('PATCH', agentPath(tenant, agent.id), {
      token: tenant.owner.token,
      body: { name: 'Renamed' },
    });
    expect(renamed.body.tools).toEqual(roundTrip.body.tools);
    const cleared = await api('PATCH', agentPath(tenant, agent.id), {
      token: tenant.owner.token,
      body: { tools: [] },
    });
    expect(cleared.body.tools).toEqual([]);
    // No tool refers to a sealed value any more; the earlier versions still do, so they are kept.
    const cleared2 = await storedAgent(tenant.workspaceId, agent.id);
    expect(cleared2?.tools).toEqual([]);
    expect(Object.keys(cleared2?.toolSecrets as object).sort()).toEqual(
      Object.keys(after?.toolSecrets as object).sort(),
    );
  });

  it('an agent without tools shows an empty list', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant);
    expect(agent.tools).toEqual([]);
  });
});

describe('agent tools: tenancy and roles', () => {
  it("another workspace's agent is 404; a viewer is 403; an unknown tool 404", async () => {
    const tenant = await newTenant();
    const other = await newTenant();
    const agent = await createAgent(tenant, [functionTool(URL_OK)]);
    const routes = ['test', 'list'].map((verb) => `tools/book_inspection/${verb}`);
    for (const route of routes) {
      const theirs = await api('POST', `${ws(other)}/agents/${agent.id}/${route}`, {
        token: other.owner.token,
        body: { arguments: {} },
      });
      expect({ route, status: theirs.status, body: theirs.body }).toEqual({
        route,
        status: 404,
        body: { error: 'Agent not found' },
      });
      const mine = await api('POST', `${agentPath(tenant, agent.id)}/${route}`, {
        token: other.owner.token,
        body: { arguments: {} },
      });
      expect({ route, status: mine.status }).toEqual({ route, status: 404 });
    }
    const viewer = await addMember(tenant, 'viewer');
    for (const route of routes) {
      const res = await api('POST', `${agentPath(tenant, agent.id)}/${route}`, {
        token: viewer.token,
        body: { arguments: {} },
      });
      expect({ route, status: res.status, body: res.body }).toEqual({
        route,
        status: 403,
        body: { error: 'Viewers have read-only access' },
      });
    }
    for (const name of ['nope', 'book_inspection__x', 'crm__lookup']) {
      const res = await api('POST', `${agentPath(tenant, agent.id)}/tools/${name}/test`, {
        token: tenant.owner.token,
        body: { arguments: {} },
      });
      expect({ name, status: res.status, body: res.body }).toEqual({
        name,
        status: 404,
        body: { error: 'Tool not found' },
      });
    }
  });
});
