import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { FunctionSpec } from '../cloud/catalog-types.js';
import { invokeFunction } from './invoke.js';
import { warn } from './log.js';

/**
 * The local API Gateway WebSocket API of the voice relay: a real WebSocket server (the `ws` package)
 * that invokes the catalog's `webSocket` function with API Gateway's events — `$connect` on the
 * upgrade (its headers and query; a non-2xx answer refuses the upgrade with that status, and the
 * connection exists only once `$connect` returned), `$default` for each message (each its own
 * invocation, not ordered), `$disconnect` once the socket is gone — and serves the API Gateway
 * Management API on the same port (`POST /<stage>/@connections/{id}` sends a frame, `DELETE` closes,
 * `GET` describes; 410 GoneException for a connection it does not have), so the handlers'
 * `@aws-sdk/client-apigatewaymanagementapi` calls are the cloud's, with their grant enforced
 * (functions/platform/grants.ts). API Gateway's limits hold: a message of at most 128 KB (else the
 * socket is closed with 1009), 10 minutes idle, 2 hours in all.
 */
export interface RelayGateway {
  /** What the provider connects to (`voice_relay_url`). */
  url: string;
  /** The Management API's endpoint (VOICE_RELAY_MANAGEMENT_URL). */
  managementUrl: string;
  port: number;
  activity(): { idle: boolean; connections: number; invocations_in_flight: number };
  stop(): Promise<void>;
}

export const RELAY_STAGE = 'local';
const MAX_MESSAGE_BYTES = 128 * 1024;
const IDLE_MS = 10 * 60_000;
const MAX_CONNECTION_MS = 2 * 3600_000;

interface Connection {
  id: string;
  routes: Map<string, FunctionSpec>;
  socket: WebSocket;
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  timers: NodeJS.Timeout[];
}

export async function startRelayGateway(options: {
  functions: FunctionSpec[];
  region: string;
  port?: number;
  /**
   * More WebSocket APIs on the same server and event loop, by path (`/{path}` instead of the stage):
   * the bench's floor under a turn is served here, beside the turns it is compared with. Their
   * connections share the Management API.
   */
  extraApis?: Record<string, FunctionSpec[]>;
}): Promise<RelayGateway> {
  const routesOf = (functions: FunctionSpec[]) => {
    const byRoute = new Map<string, FunctionSpec>();
    for (const fn of functions) for (const route of fn.webSocket?.routes ?? []) byRoute.set(route, fn);
    return byRoute;
  };
  const apis = new Map<string, Map<string, FunctionSpec>>([[RELAY_STAGE, routesOf(options.functions)]]);
  for (const [path, functions] of Object.entries(options.extraApis ?? {}))
    apis.set(path, routesOf(functions));
  const connections = new Map<string, Connection>();
  let inFlight = 0;
  let baseHost = '';

  const requestContext = (
    routeKey: string,
    eventType: string,
    connection: { id: string; sourceIp: string; connectedAt: number },
  ) => ({
    routeKey,
    eventType,
    connectionId: connection.id,
    stage: RELAY_STAGE,
    domainName: baseHost,
    apiId: 'relay',
    requestId: randomUUID(),
    extendedRequestId: randomUUID(),
    messageDirection: 'IN',
    requestTimeEpoch: Date.now(),
    connectedAt: connection.connectedAt,
    identity: { sourceIp: connection.sourceIp },
  });

  async function invoke(
    routes: Map<string, FunctionSpec>,
    routeKey: string,
    event: Record<string, unknown>,
  ): Promise<unknown> {
    const fn = routes.get(routeKey) ?? routes.get('$default');
    if (!fn) return { statusCode: 200 };
    inFlight += 1;
    try {
      return await invokeFunction(fn, event, options.region);
    } finally {
      inFlight -= 1;
    }
  }

  const statusOf = (result: unknown): number => {
    const code = (result as { statusCode?: unknown } | null)?.statusCode;
    return typeof code === 'number' ? code : 200;
  };

  function disconnect(connection: Connection, reason: string): void {
    if (!connections.delete(connection.id)) return;
    for (const timer of connection.timers) clearTimeout(timer);
    void invoke(connection.routes, '$disconnect', {
      requestContext: {
        ...requestContext('$disconnect', 'DISCONNECT', connection),
        disconnectReason: reason,
      },
      headers: {},
      isBase64Encoded: false,
    }).catch((error: unknown) => warn('relay $disconnect failed', error));
  }

  function onMessage(connection: Connection, data: RawData, isBinary: boolean): void {
    connection.lastActiveAt = Date.now();
    const bytes = Buffer.isBuffer(data)
      ? data
      : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
    const context = { ...requestContext('$default', 'MESSAGE', connection), messageId: randomUUID() };
    void invoke(connection.routes, '$default', {
      requestContext: context,
      body: isBinary ? bytes.toString('base64') : bytes.toString('utf8'),
      isBase64Encoded: isBinary,
    }).catch((error: unknown) => {
      warn('relay $default failed', error);
      // As API Gateway does when a frame's integration fails (an error, a timeout): the client is told.
      if (connection.socket.readyState === WebSocket.OPEN)
        connection.socket.send(
          JSON.stringify({
            message: 'Internal server error',
            connectionId: connection.id,
            requestId: context.requestId,
          }),
        );
    });
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });

  async function upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay');
    const routes = apis.get(url.pathname.replace(/^\/|\/$/g, ''));
    if (!routes) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const connection = {
      id: randomBytes(12).toString('base64url'),
      routes,
      sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
      connectedAt: Date.now(),
    };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
    const query = Object.fromEntries(url.searchParams);
    let status: number;
    try {
      status = statusOf(
        await invoke(routes, '$connect', {
          requestContext: requestContext('$connect', 'CONNECT', connection),
          headers,
          queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
          isBase64Encoded: false,
        }),
      );
    } catch (error) {
      warn('relay $connect failed', error);
      status = 500;
    }
    if (status < 200 || status >= 300) {
      socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const entry: Connection = { ...connection, socket: ws, lastActiveAt: Date.now(), timers: [] };
      connections.set(entry.id, entry);
      const idle = setInterval(() => {
        if (Date.now() - entry.lastActiveAt > IDLE_MS) ws.close(1001, 'Going away');
      }, 30_000);
      idle.unref();
      const lifetime = setTimeout(() => ws.close(1001, 'Going away'), MAX_CONNECTION_MS);
      lifetime.unref();
      entry.timers.push(idle, lifetime);
      ws.on('message', (data, isBinary) => onMessage(entry, data, isBinary));
      ws.on('close', () => disconnect(entry, 'closed'));
      ws.on('error', () => disconnect(entry, 'error'));
    });
  }

  const PATH = new RegExp(`^/${RELAY_STAGE}/@connections/([^/]+)$`);

  function management(req: IncomingMessage, res: ServerResponse): void {
    const match = PATH.exec((req.url ?? '/').split('?')[0]);
    const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      const payload = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(payload);
    };
    if (!match) return reply(404, { message: 'Not Found' });
    const connection = connections.get(decodeURIComponent(match[1]));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (!connection || connection.socket.readyState !== connection.socket.OPEN)
        return reply(410, { message: 'Gone' }, { 'x-amzn-errortype': 'GoneException' });
      switch (req.method) {
        case 'POST': {
          const data = Buffer.concat(chunks);
          if (data.length > MAX_MESSAGE_BYTES)
            return reply(
              413,
              { message: 'Payload too large' },
              { 'x-amzn-errortype': 'PayloadTooLargeException' },
            );
          connection.socket.send(data.toString('utf8'), (error) => {
            if (error) reply(410, { message: 'Gone' }, { 'x-amzn-errortype': 'GoneException' });
            else reply(200);
          });
          return;
        }
        case 'DELETE':
          connection.socket.close(1000, 'Closed by the application');
          return reply(204);
        case 'GET':
          return reply(200, {
            ConnectedAt: new Date(connection.connectedAt).toISOString(),
            Identity: { SourceIp: connection.sourceIp },
            LastActiveAt: new Date(connection.lastActiveAt).toISOString(),
          });
        default:
          return reply(405, { message: 'Method not allowed' });
      }
    });
  }

  const server = createServer(management);
  server.on('upgrade', (req, socket, head) => {
    void upgrade(req, socket as Socket, head).catch((error: unknown) => {
      warn('relay upgrade failed', error);
      socket.destroy();
    });
  });
  await new Promise<void>((resolveListening, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolveListening();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseHost = `127.0.0.1:${port}`;
  return {
    url: `ws://${baseHost}/${RELAY_STAGE}`,
    managementUrl: `http://${baseHost}/${RELAY_STAGE}`,
    port,
    activity: () => ({
      idle: inFlight === 0,
      connections: connections.size,
      invocations_in_flight: inFlight,
    }),
    stop: async () => {
      for (const connection of connections.values()) connection.socket.terminate();
      wss.close();
      await new Promise<void>((resolveClosed) => {
        server.close(() => resolveClosed());
        server.closeAllConnections();
      });
    },
  };
}
