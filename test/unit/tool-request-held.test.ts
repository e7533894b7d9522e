import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllowedHosts } from '../../functions/platform/outbound-http/allow-list.js';
import { postForResponse } from '../../functions/platform/outbound-http/http-attempt.js';

/**
 * A tool's request made ready while its turn's proof is read (`sendWhen`), against a real socket: the
 * connection opens at once, the request itself goes only once the proof says yes, and a "no" (or a
 * failed read) sends nothing at all.
 */

let server: Server;
let url: string;
const seen = {
  connections: 0,
  closed: 0,
  requests: [] as { at: number; body: string; signature?: string }[],
};

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      seen.requests.push({ at: Date.now(), body, signature: request.headers['webhook-signature'] as string });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"booked":true}');
    });
  });
  server.on('connection', (socket) => {
    seen.connections += 1;
    socket.on('close', () => (seen.closed += 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}/book`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  seen.connections = 0;
  seen.closed = 0;
  seen.requests = [];
});

const post = (sendWhen: Promise<boolean>, lateHeaders?: Promise<Record<string, string>>) =>
  postForResponse({
    url,
    body: '{"tool":"book"}',
    headers: {
      'content-type': 'application/json',
      ...(lateHeaders ? {} : { 'webhook-signature': 'v1,abc' }),
    },
    ...(lateHeaders ? { lateHeaders } : {}),
    allowedHosts: parseAllowedHosts(new URL(url).host),
    requireHttps: false,
    timeoutMs: 5_000,
    sendWhen,
  });

/** A proof that answers when told to. */
function proof(): { promise: Promise<boolean>; answer: (current: boolean | Error) => void } {
  let answer: (current: boolean | Error) => void = () => undefined;
  const promise = new Promise<boolean>((resolve, reject) => {
    answer = (current) => (current instanceof Error ? reject(current) : resolve(current));
  });
  return { promise, answer };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 500 && !condition(); i += 1) await new Promise((r) => setTimeout(r, 2));
  if (!condition()) throw new Error('condition not reached');
};

test('the connection opens while the proof is read; the request, headers and body, goes once it says the turn is current', async () => {
  const gate = proof();
  const exchange = post(gate.promise);
  await until(() => seen.connections === 1);
  expect(seen.requests).toEqual([]);
  const answeredAt = Date.now();
  gate.answer(true);
  const result = await exchange;
  expect(result).toMatchObject({ statusCode: 200, body: '{"booked":true}', cancelled: false });
  expect(result.notSent).toBeUndefined();
  expect(seen.requests).toEqual([{ at: expect.any(Number), body: '{"tool":"book"}', signature: 'v1,abc' }]);
  expect(seen.requests[0].at).toBeGreaterThanOrEqual(answeredAt);
});

test.each([
  ['a superseded turn', false],
  ['a proof that could not be read', new Error('read failed')],
])('%s: nothing of the request is sent', async (_name, answer) => {
  const gate = proof();
  const exchange = post(gate.promise);
  await until(() => seen.connections === 1);
  gate.answer(answer);
  const result = await exchange;
  expect(result).toMatchObject({ notSent: true, body: '' });
  expect(result.statusCode).toBeUndefined();
  // The server saw the connection open and close, and no request on it.
  await until(() => seen.closed === 1);
  expect(seen.requests).toEqual([]);
});

test('headers known later (the signature, once the secrets are read): the request waits for them and carries them', async () => {
  const signature = proof();
  const exchange = post(
    Promise.resolve(true),
    signature.promise.then(() => ({ 'webhook-signature': 'v1,late' })),
  );
  await until(() => seen.connections === 1);
  expect(seen.requests).toEqual([]);
  signature.answer(true);
  expect(await exchange).toMatchObject({ statusCode: 200 });
  expect(seen.requests).toEqual([{ at: expect.any(Number), body: '{"tool":"book"}', signature: 'v1,late' }]);
});
