import { Agent, request } from 'node:http';

/**
 * Start-call through the local gateway with an API key, as a customer's server would call it: a
 * keep-alive connection per concurrent caller, the body of the README's example. Each run is one
 * request; the statuses are tallied (every one should be 201).
 */
export interface StartCallClient {
  op: (index: number) => Promise<void>;
  statuses: Record<number, number>;
  /** Ids of the calls started (in order of completion). */
  callIds: string[];
  close(): void;
}

export function startCallClient(input: {
  baseUrl: string;
  workspaceId: string;
  agentId: string;
  apiKey: string;
  toPhone: string;
  /** Connections kept open: the concurrency the client is used with. */
  maxSockets: number;
}): StartCallClient {
  const url = new URL(
    `${input.baseUrl}/api/v1/workspaces/${input.workspaceId}/agents/${input.agentId}/start-call`,
  );
  const agent = new Agent({ keepAlive: true, maxSockets: input.maxSockets });
  const statuses: Record<number, number> = {};
  const callIds: string[] = [];
  const op = (index: number) =>
    new Promise<void>((resolveOp, rejectOp) => {
      const body = JSON.stringify({ to_phone: input.toPhone, parameters: { name: `Bench ${index}` } });
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            authorization: `Bearer ${input.apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status === 201)
              callIds.push((JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id);
            resolveOp();
          });
          res.on('error', rejectOp);
        },
      );
      req.on('error', rejectOp);
      req.end(body);
    });
  return { op, statuses, callIds, close: () => agent.destroy() };
}
