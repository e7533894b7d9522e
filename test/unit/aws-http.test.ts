import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { resetConfig } from '../../functions/platform/config.js';
import { getSecretValue } from '../../functions/platform/secrets.js';
import { headBucket, objectExists, putObject, signedDownloadUrl } from '../../functions/platform/storage.js';

/**
 * S3 and Secrets Manager without their clients (platform/aws-http.ts): each request goes to a
 * stand-in HTTP endpoint and is checked against an independent SigV4 computation (AWS's documented
 * algorithm, written out here), and against what the official client sends where it can be compared.
 */

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

interface Received {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

async function standIn(
  answer: (request: Received) => { status: number; body?: string } = () => ({ status: 200 }),
) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(request);
      const { status, body } = answer(request);
      res.writeHead(status, { 'content-type': 'application/json' }).end(body ?? '');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * SigV4 as AWS documents it. `path` is the canonical URI as sent (S3: encoded once, as is; other
 * services: encoded again); `query` excludes the signature; `payloadHash` is the hashed payload or
 * S3's UNSIGNED-PAYLOAD.
 */
function expectedSignature(input: {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  signedHeaders: string[];
  payloadHash: string;
  amzDate: string;
  scope: string;
}): string {
  const query = [...input.query.entries()]
    .map(([key, value]) => [rfc3986(key), rfc3986(value)])
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const canonical = [
    input.method,
    input.path,
    query,
    input.signedHeaders.map((name) => `${name}:${input.headers[name].trim()}\n`).join(''),
    input.signedHeaders.join(';'),
    input.payloadHash,
  ].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', input.amzDate, input.scope, sha256(canonical)].join('\n');
  const [date, region, service] = input.scope.split('/');
  const key = hmac(
    hmac(hmac(hmac(`AWS4${CREDENTIALS.secretAccessKey}`, date), region), service),
    'aws4_request',
  );
  return createHmac('sha256', key).update(toSign).digest('hex');
}

/** Checks a header-signed request received by the stand-in. */
function expectSignedHeaders(request: Received, service: string, payloadHash: string): void {
  const authorization = String(request.headers.authorization);
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/([^,]+), SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  expect(match).not.toBeNull();
  const [, accessKey, scope, signed, signature] = match!;
  expect(accessKey).toBe(CREDENTIALS.accessKeyId);
  expect(scope).toMatch(new RegExp(`^\\d{8}/ap-southeast-2/${service}/aws4_request$`));
  const url = new URL(request.url, 'http://x');
  const signedHeaders = signed.split(';');
  expect(signedHeaders).toContain('host');
  expect(signature).toBe(
    expectedSignature({
      method: request.method,
      path: service === 's3' ? url.pathname : url.pathname.split('/').map(rfc3986).join('/'),
      query: url.searchParams,
      headers: request.headers as Record<string, string>,
      signedHeaders,
      payloadHash,
      amzDate: String(request.headers['x-amz-date']),
      scope,
    }),
  );
}

describe('S3 without the client', () => {
  let endpoint: Awaited<ReturnType<typeof standIn>>;
  const saved = { ...process.env };

  beforeEach(async () => {
    endpoint = await standIn(({ method, url }) =>
      method === 'HEAD' && url.includes('missing') ? { status: 404 } : { status: 200 },
    );
    Object.assign(process.env, {
      AWS_REGION: 'ap-southeast-2',
      AWS_ENDPOINT_URL_S3: endpoint.url,
      S3_FORCE_PATH_STYLE: 'true',
      BUCKET_NAME: 'recordings-bucket',
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    });
    delete process.env.AWS_SESSION_TOKEN;
    resetConfig();
  });
  afterEach(async () => {
    await endpoint.close();
    process.env = { ...saved };
    resetConfig();
  });

  it('puts an object: path-style, the key encoded once, the payload hash signed', async () => {
    const key = 'workspaces/ws_1/calls/call 1/recording é.wav';
    const body = new Uint8Array([82, 73, 70, 70, 0, 1, 2, 3]);
    await putObject(key, body, 'audio/wav');
    const [request] = endpoint.received;
    expect(request.method).toBe('PUT');
    expect(request.url).toBe('/recordings-bucket/workspaces/ws_1/calls/call%201/recording%20%C3%A9.wav');
    expect(request.headers['content-type']).toBe('audio/wav');
    expect([...request.body]).toEqual([...body]);
    const payloadHash = sha256(Buffer.from(body));
    expect(request.headers['x-amz-content-sha256']).toBe(payloadHash);
    expectSignedHeaders(request, 's3', payloadHash);
  });

  it('asks for an object and the bucket with HEAD; a 404 is "not there"', async () => {
    await expect(objectExists('a/present.wav')).resolves.toBe(true);
    await expect(objectExists('a/missing.wav')).resolves.toBe(false);
    await expect(headBucket()).resolves.toBeUndefined();
    expect(endpoint.received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'HEAD /recordings-bucket/a/present.wav',
      'HEAD /recordings-bucket/a/missing.wav',
      'HEAD /recordings-bucket',
    ]);
    for (const request of endpoint.received) {
      expectSignedHeaders(request, 's3', sha256(''));
    }
  });

  it('presigns a download URL that S3 accepts (unsigned payload, host signed, the expiry asked)', async () => {
    const url = new URL(await signedDownloadUrl('workspaces/ws_1/calls/call_1/recording.wav', 300));
    expect(`${url.origin}${url.pathname}`).toBe(
      `${endpoint.url}/recordings-bucket/workspaces/ws_1/calls/call_1/recording.wav`,
    );
    const query = url.searchParams;
    expect(query.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(query.get('X-Amz-Expires')).toBe('300');
    expect(query.get('X-Amz-SignedHeaders')).toBe('host');
    expect(query.get('X-Amz-Content-Sha256')).toBe('UNSIGNED-PAYLOAD');
    const [accessKey, ...scope] = String(query.get('X-Amz-Credential')).split('/');
    expect(accessKey).toBe(CREDENTIALS.accessKeyId);
    const signature = query.get('X-Amz-Signature');
    const unsigned = new URLSearchParams(query);
    unsigned.delete('X-Amz-Signature');
    expect(signature).toBe(
      expectedSignature({
        method: 'GET',
        path: url.pathname,
        query: unsigned,
        headers: { host: url.host },
        signedHeaders: ['host'],
        payloadHash: 'UNSIGNED-PAYLOAD',
        amzDate: String(query.get('X-Amz-Date')),
        scope: scope.join('/'),
      }),
    );
  });

  it('uses virtual-hosted URLs without path style', async () => {
    process.env.S3_FORCE_PATH_STYLE = 'false';
    delete process.env.AWS_ENDPOINT_URL_S3;
    resetConfig();
    const url = new URL(await signedDownloadUrl('a/b.wav'));
    expect(`${url.origin}${url.pathname}`).toBe(
      'https://recordings-bucket.s3.ap-southeast-2.amazonaws.com/a/b.wav',
    );
  });

  it('throws a refusal named by its code, with the status', async () => {
    await endpoint.close();
    endpoint = await standIn(() => ({
      status: 403,
      body: '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
    }));
    process.env.AWS_ENDPOINT_URL_S3 = endpoint.url;
    resetConfig();
    await expect(putObject('k', 'x', 'text/plain')).rejects.toMatchObject({
      name: 'AccessDenied',
      message: 'Access Denied',
      $metadata: { httpStatusCode: 403 },
    });
    expect(endpoint.received).toHaveLength(1); // a refusal is not retried
  });
});

describe('Secrets Manager without the client', () => {
  it('sends GetSecretValue as the official client does', async () => {
    const endpoint = await standIn(() => ({
      status: 200,
      body: JSON.stringify({ SecretString: '{"a":1}' }),
    }));
    try {
      const arn = 'arn:aws:secretsmanager:ap-southeast-2:123456789012:secret:voice-agent/telephony-AbCdEf';
      await expect(
        getSecretValue(arn, { endpoint: endpoint.url, credentials: CREDENTIALS }),
      ).resolves.toMatchObject({
        SecretString: '{"a":1}',
      });
      const client = new SecretsManagerClient({
        region: process.env.AWS_REGION ?? 'ap-southeast-2',
        endpoint: endpoint.url,
        credentials: CREDENTIALS,
        maxAttempts: 1,
      });
      await client.send(new GetSecretValueCommand({ SecretId: arn }));
      const [ours, theirs] = endpoint.received;
      for (const field of ['method', 'url'] as const) expect(ours[field]).toBe(theirs[field]);
      for (const header of ['content-type', 'x-amz-target']) {
        expect(ours.headers[header]).toBe(theirs.headers[header]);
      }
      expect(JSON.parse(ours.body.toString())).toEqual(JSON.parse(theirs.body.toString()));
      const scope = (r: Received) =>
        String(r.headers.authorization)
          .split(', ')[0]
          .replace(/\/\d{8}\//, '/D/');
      expect(scope(ours)).toBe(scope(theirs));
      if (process.env.AWS_REGION === 'ap-southeast-2' || !process.env.AWS_REGION) {
        expectSignedHeaders(ours, 'secretsmanager', sha256(ours.body));
      }
    } finally {
      await endpoint.close();
    }
  });
});
