import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

/**
 * A real MCP server for the tests, built with the SDK (McpServer over the Streamable HTTP transport,
 * with sessions, on a local port), the tools a CRM might offer; every request it got is in `seen`
 * (with the JSON-RPC method of a POST, to count `tools/list` and `tools/call`).
 */
export const LONG_NAME = `t${'x'.repeat(63)}`;

/** A tool as a server lists it, its input schema as is (a raw server may list anything). */
export interface RawTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A server listing `tools` as given (the SDK's low-level Server): each call answers `called {name}`. */
function rawServer(tools: readonly RawTool[]): { connect: McpServer['connect'] } {
  const server = new Server({ name: 'raw-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools] }));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: `called ${request.params.name}` }],
  }));
  return server;
}

function buildServer(): McpServer {
  const server = new McpServer({ name: 'crm-test', version: '1.0.0' });
  server.registerTool(
    'lookup_contact',
    { description: 'Find a contact by phone', inputSchema: { phone: z.string() } },
    async ({ phone }) => ({ content: [{ type: 'text', text: `Contact for ${phone}: Sam Lee` }] }),
  );
  server.registerTool('failing_tool', { description: 'Always fails' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'the CRM is read-only today' }],
  }));
  server.registerTool('not.allowed', { description: 'A dotted name' }, async () => ({ content: [] }));
  server.registerTool(LONG_NAME, { description: 'A long name' }, async () => ({ content: [] }));
  server.registerTool('other_tool', { description: 'Not in allowed_tools' }, async () => ({ content: [] }));
  return server;
}

export interface McpTestServer {
  url: string;
  seen: { method: string; headers: IncomingHttpHeaders; rpc?: string }[];
  /** Forgets every session (as a restarted server would): a request naming one is then 404. */
  expireSessions(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `listing`: a server listing these tools as they are (else the CRM's tools above); `hangOnDelete`:
 * the server never answers the request that ends a session (a hung server at hang-up).
 */
export async function startMcpServer(
  listing?: readonly RawTool[],
  options: { hangOnDelete?: boolean } = {},
): Promise<McpTestServer> {
  const seen: McpTestServer['seen'] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const rpc = (body as { method?: string } | undefined)?.method;
      seen.push({ method: request.method ?? '', headers: request.headers, ...(rpc ? { rpc } : {}) });
      if (options.hangOnDelete && request.method === 'DELETE') return;
      const sessionId = request.headers['mcp-session-id'] as string | undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId) {
          response.writeHead(404).end();
          return;
        }
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId);
        };
        await (listing ? rawServer(listing) : buildServer()).connect(created);
        transport = created;
      }
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    expireSessions: async () => {
      const open = [...transports.values()];
      transports.clear();
      for (const transport of open) await transport.close();
    },
    stop: async () => {
      for (const transport of transports.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
