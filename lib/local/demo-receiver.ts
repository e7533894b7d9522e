import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { withAllowedHost } from '../../functions/platform/outbound-http/allow-list.js';
import { verifySignedRequest } from '../../functions/webhook-deliveries/signing.js';
import { registerLocalService, type LocalServiceContext } from './services.js';

/**
 * The local demo webhook receiver: what a customer's endpoint would do with a post-call webhook.
 * It verifies the Standard Webhooks signature with the workspace's signing secret (read from the
 * local table, as a customer would paste it from `GET …/webhook-secret`), prints one line per
 * delivery and appends it to `<state dir>/demo-webhooks.jsonl`. A bad signature is answered 401.
 *
 * `npm start` starts it (lib/local/services/demo-receiver.ts registers it); its URL is
 * DEMO_WEBHOOK_RECEIVER_URL in the stack's env, and the seed points the demo agent's webhook action
 * at it. Its host:port is added to WEBHOOK_ALLOWED_HOSTS (loopback is otherwise refused).
 * `GET /` lists what it received; `GET /calls/{call_id}` shows the verified payloads of a call's
 * deliveries as they arrived (kept in memory only, the newest 200: what a customer's endpoint got).
 */

export const DEMO_RECEIVER_PATH = '/webhooks/demo';
/**
 * A demo function tool (an agent's `tools`, docs/api.md "Agent tools"): `POST /tools/book_inspection`
 * verifies the signature like a webhook (the workspace is the body's `call.workspace_id`) and answers
 * a JSON confirmation of the inspection the arguments ask for (`date`, `time`, `address`).
 */
export const DEMO_TOOL_PATH = '/tools/book_inspection';
const MAX_BODY_BYTES = 1024 * 1024;

export interface ReceivedWebhook {
  received_at: string;
  webhook_id: string | null;
  type: string | null;
  call_id: string | null;
  workspace_id: string | null;
  verified: boolean;
  error: string | null;
}

export interface DemoReceiver {
  url: string;
  /** The demo `book_inspection` tool's URL. */
  toolUrl: string;
  port: number;
  received: ReceivedWebhook[];
  stop(): Promise<void>;
}

/** The signing secrets of a workspace that are valid now (current, and the previous one during its grace). */
async function workspaceSecrets(workspaceId: string): Promise<string[]> {
  const [{ readSecret }, { activeSecrets }] = await Promise.all([
    import('../../functions/webhook-deliveries/entities.js'),
    import('../../functions/webhook-deliveries/signing.js'),
  ]);
  const { data } = await readSecret(workspaceId);
  return data ? activeSecrets(data, new Date()) : [];
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startDemoReceiver(options: {
  port?: number;
  logFile?: string;
  say?: (line: string) => void;
  /** Where to find a workspace's secrets (default: the local table). */
  secretsFor?: (workspaceId: string) => Promise<string[]>;
}): Promise<DemoReceiver> {
  const received: ReceivedWebhook[] = [];
  /** The verified deliveries' payloads, by call (memory only, the newest 200 in all). */
  const payloads: { callId: string; payload: unknown }[] = [];
  const secretsFor = options.secretsFor ?? workspaceSecrets;
  const say = options.say ?? (() => undefined);

  const server: Server = createServer((request, response) => {
    void (async () => {
      if (request.method === 'GET' && (request.url === '/' || request.url === DEMO_RECEIVER_PATH)) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ received }, null, 2));
        return;
      }
      const asked = request.method === 'GET' ? /^\/calls\/([A-Za-z0-9_]+)$/.exec(request.url ?? '') : null;
      if (asked) {
        const found = payloads.filter((p) => p.callId === asked[1]).map((p) => p.payload);
        response.writeHead(found.length > 0 ? 200 : 404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ call_id: asked[1], payloads: found }, null, 2));
        return;
      }
      if (request.method === 'POST' && request.url === DEMO_TOOL_PATH) {
        const answer = await bookInspection(await readBody(request), request, secretsFor);
        say(
          answer.status === 200
            ? `✓ tool book_inspection — webhook-id ${String(request.headers['webhook-id'])}, signature valid`
            : `✗ tool book_inspection — ${answer.body.error}`,
        );
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer.body));
        return;
      }
      if (request.method !== 'POST' || !request.url?.startsWith(DEMO_RECEIVER_PATH)) {
        response.writeHead(404).end();
        return;
      }
      const body = await readBody(request);
      const webhookId = (request.headers['webhook-id'] as string | undefined) ?? null;
      let payload: { type?: string; data?: { call_id?: string; workspace_id?: string } } = {};
      try {
        payload = JSON.parse(body) as typeof payload;
      } catch {
        // verified below: a body that is not JSON fails verification
      }
      const workspaceId = payload.data?.workspace_id ?? null;
      let verified = false;
      let error: string | null = null;
      const secrets = workspaceId ? await secretsFor(workspaceId) : [];
      if (secrets.length === 0) error = 'no signing secret for this workspace';
      for (const secret of secrets) {
        try {
          verifySignedRequest(secret, body, request.headers as Record<string, string | string[] | undefined>);
          verified = true;
          error = null;
          break;
        } catch (e) {
          error = (e as Error).message;
        }
      }
      const entry: ReceivedWebhook = {
        received_at: new Date().toISOString(),
        webhook_id: webhookId,
        type: payload.type ?? null,
        call_id: payload.data?.call_id ?? null,
        workspace_id: workspaceId,
        verified,
        error,
      };
      received.push(entry);
      if (received.length > 200) received.shift();
      if (verified && entry.call_id) {
        payloads.push({ callId: entry.call_id, payload });
        if (payloads.length > 200) payloads.shift();
      }
      if (options.logFile) appendFileSync(options.logFile, `${JSON.stringify(entry)}\n`);
      say(
        verified
          ? `✓ ${entry.type} ${entry.call_id ?? ''} — webhook-id ${webhookId}, signature valid`
          : `✗ ${entry.type ?? 'unknown'} — webhook-id ${webhookId}, signature NOT valid (${error})`,
      );
      response.writeHead(verified ? 204 : 401).end();
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(options.port ?? 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || !options.port) throw error;
    await listen(0);
  }
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${DEMO_RECEIVER_PATH}`,
    toolUrl: `http://127.0.0.1:${port}${DEMO_TOOL_PATH}`,
    port,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The demo tool's answer: 401 unless a signature of the call's workspace matches, else the booking. */
async function bookInspection(
  body: string,
  request: IncomingMessage,
  secretsFor: (workspaceId: string) => Promise<string[]>,
): Promise<{ status: number; body: Record<string, unknown> & { error?: string } }> {
  let payload: { call?: { workspace_id?: string }; arguments?: Record<string, unknown> } = {};
  try {
    payload = JSON.parse(body) as typeof payload;
  } catch {
    return { status: 400, body: { error: 'the body is not JSON' } };
  }
  const workspaceId = payload.call?.workspace_id;
  const secrets = workspaceId ? await secretsFor(workspaceId) : [];
  const verified = secrets.some((secret) => {
    try {
      verifySignedRequest(secret, body, request.headers as Record<string, string | string[] | undefined>);
      return true;
    } catch {
      return false;
    }
  });
  if (!verified) return { status: 401, body: { error: 'signature not valid' } };
  const args = payload.arguments ?? {};
  const text = (value: unknown, fallback: string) =>
    typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 200) : fallback;
  const webhookId = String(request.headers['webhook-id'] ?? '');
  const digits = [...webhookId].reduce((sum, c) => (sum * 31 + c.charCodeAt(0)) % 10_000, 7);
  return {
    status: 200,
    body: {
      confirmed: true,
      inspection: {
        date: text(args.date, 'the next business day'),
        time: text(args.time, '10:00'),
        address: text(args.address, 'the listed property'),
      },
      reference: `INS-${String(digits).padStart(4, '0')}`,
    },
  };
}

// ── The local service ─────────────────────────────────────────────────────────────────────────────

let running: DemoReceiver | undefined;

const portFile = (stateDir: string) => join(stateDir, 'demo-receiver.json');

function preferredPort(ctx: LocalServiceContext): number | undefined {
  if (ctx.inMemory) return undefined;
  try {
    return (JSON.parse(readFileSync(portFile(ctx.stateDir), 'utf8')) as { port?: number }).port;
  } catch {
    return undefined;
  }
}

registerLocalService({
  name: 'demo-webhook-receiver',
  async start(ctx) {
    mkdirSync(ctx.stateDir, { recursive: true });
    running = await startDemoReceiver({
      // The seed stores this URL in the demo agent: keep the port across restarts when possible.
      port: preferredPort(ctx),
      logFile: join(ctx.stateDir, 'demo-webhooks.jsonl'),
      say: ctx.say,
    });
    if (!ctx.inMemory) writeFileSync(portFile(ctx.stateDir), JSON.stringify({ port: running.port }));
    return {
      url: running.url,
      port: running.port,
      env: {
        DEMO_WEBHOOK_RECEIVER_URL: running.url,
        DEMO_TOOL_BOOK_INSPECTION_URL: running.toolUrl,
        WEBHOOK_ALLOWED_HOSTS: withAllowedHost(ctx.env.WEBHOOK_ALLOWED_HOSTS, '127.0.0.1', running.port),
      },
      description:
        'verifies post-call webhook signatures and prints each delivery (GET / lists them; GET /calls/<call id>: a call’s payloads)',
    };
  },
  async stop() {
    await running?.stop();
    running = undefined;
  },
});
