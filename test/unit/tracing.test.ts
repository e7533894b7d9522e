import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { tracing, tracingWanted, traceClient } from '../../functions/platform/tracing.js';
import { dynamoClient } from '../../functions/platform/table.js';

/**
 * Tracing that traces (functions/platform/tracing.ts): in Lambda, a DynamoDB request of the kernel's
 * client and a `fetch` each reach the X-Ray daemon as a subsegment of the invocation's trace; anywhere
 * else (tests, the local stack) the tracer is not loaded and the clients are left as they are. Lambda
 * is played by a child process with Lambda's environment (AWS_EXECUTION_ENV, LAMBDA_TASK_ROOT, the
 * invocation's _X_AMZN_TRACE_ID, the daemon's address), against a stand-in AWS endpoint and a UDP
 * socket as the daemon.
 */

const run = promisify(execFile);
const TRACE_ROOT = '1-5759e988-bd862e3fe1be46a994272793';

interface Subsegment {
  name: string;
  trace_id: string;
  namespace?: string;
  aws?: { operation?: string; table_name?: string };
  http?: { request?: { url?: string }; response?: { status?: number } };
}

let standIn: Server;
let standInUrl: string;
let daemon: Socket;
let daemonPort: number;
const received: Subsegment[] = [];
let requests = 0;

beforeAll(async () => {
  standIn = createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
  daemon = createSocket('udp4');
  daemon.on('message', (message) => {
    // Each datagram: a JSON header line, then the (sub)segment document.
    const [, body] = message.toString('utf8').split('\n');
    if (body) received.push(JSON.parse(body) as Subsegment);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  daemonPort = daemon.address().port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => standIn.close(() => resolve()));
  await new Promise<void>((resolve) => daemon.close(resolve));
});

beforeEach(() => {
  received.length = 0;
  requests = 0;
});

async function runChild(extra: Record<string, string>): Promise<{ tracing: boolean; xray: boolean }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    STAND_IN_URL: standInUrl,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_ENDPOINT_URL_DYNAMODB: standInUrl,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    STAGE: 'cloud',
    TABLE_NAME: 'traced-table',
    POWERTOOLS_SERVICE_NAME: 'voice-agent-test',
    ...extra,
  };
  const { stdout, stderr } = await run(
    process.execPath,
    ['--import', 'tsx', 'test/fixtures/tracing/traced-requests.ts'],
    { env, timeout: 30000 },
  );
  expect(stderr).not.toMatch(/Missing AWS Lambda trace data|context missing|Error/i);
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { tracing: boolean; xray: boolean };
}

const lambda = () => ({
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  LAMBDA_TASK_ROOT: process.cwd(),
  _X_AMZN_TRACE_ID: `Root=${TRACE_ROOT};Parent=53995c3f42cd8ad8;Sampled=1`,
  AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemonPort}`,
});

const waitForSubsegments = async (count: number): Promise<void> => {
  const until = Date.now() + 5000;
  while (received.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
};

describe('tracing', () => {
  it('is off in tests: no tracer, the clients untouched', () => {
    expect(tracingWanted()).toBe(false);
    expect(tracing()).toBe(false);
    const calls: string[] = [];
    const client = {
      middlewareStack: { use: () => calls.push('use'), remove: () => calls.push('remove') },
    };
    expect(traceClient(client)).toBe(client);
    expect(calls).toEqual([]);
    expect(dynamoClient().middlewareStack.identify().join(' ')).not.toContain('XRaySDKInstrumentation');
  });

  it('decides from the environment as the tracer does', () => {
    expect(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' })).toBe(true);
    expect(
      tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'false' }),
    ).toBe(false);
    expect(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', AWS_SAM_LOCAL: 'true' })).toBe(false);
    expect(tracingWanted({})).toBe(false);
  });

  it('in Lambda, sends a subsegment for each DynamoDB request and each fetch, in the invocation trace', async () => {
    const seen = await runChild(lambda());
    expect(seen).toEqual({ tracing: true, xray: true });
    expect(requests).toBe(2);
    await waitForSubsegments(2);
    const dynamo = received.filter((s) => s.name === 'DynamoDB');
    expect(dynamo).toHaveLength(1);
    expect(dynamo[0]).toMatchObject({
      trace_id: TRACE_ROOT,
      namespace: 'aws',
      aws: { operation: 'GetItem', table_name: 'traced-table' },
    });
    const fetched = received.filter((s) => s.name === '127.0.0.1' && s.namespace === 'remote');
    expect(fetched.length).toBeGreaterThanOrEqual(1);
    expect(fetched[0].trace_id).toBe(TRACE_ROOT);
    // The path, never the query string.
    expect(fetched.find((s) => s.http?.request?.url?.endsWith('/hook'))).toBeDefined();
    expect(JSON.stringify(received)).not.toContain('secret-in-query');
  }, 60000);

  it('in Lambda with POWERTOOLS_TRACE_ENABLED=false, and off Lambda, loads no tracer and sends nothing', async () => {
    expect(await runChild({ ...lambda(), POWERTOOLS_TRACE_ENABLED: 'false' })).toEqual({
      tracing: false,
      xray: false,
    });
    expect(await runChild({ AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemonPort}` })).toEqual({
      tracing: false,
      xray: false,
    });
    expect(requests).toBe(4);
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toEqual([]);
  }, 60000);
});
