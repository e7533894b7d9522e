import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, HttpRequest } from '@smithy/types';
// In Lambda, the tracer traces every fetch, so each of these requests is a subsegment (platform/tracing.ts).
import './tracing.js';

/**
 * AWS requests without a service client: SigV4-signed `fetch` (the SDK's own signer and credential
 * chain, which every function already bundles with the DynamoDB client). For the few calls of S3,
 * SES and Secrets Manager the service uses, a full client adds its whole service model to the bundle
 * (S3: ~130 KB, SES: ~60 KB, Secrets Manager: ~14 KB of every function that can reach it). Endpoints,
 * retries and errors follow the SDK: `AWS_ENDPOINT_URL_<SERVICE>` / `AWS_ENDPOINT_URL` (the local
 * stack's stand-ins), up to 3 attempts on throttling, 5xx and network failures, and a refusal thrown
 * as an error named by AWS's error code with `$metadata.httpStatusCode`.
 */

/** node:crypto as the signer's hash (HMAC when given a secret). */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

let credentials: ReturnType<typeof defaultProvider> | undefined;
/** The SDK's default credential chain (the function's role in Lambda), memoized and refreshed by the SDK. */
const credentialProvider = () => (credentials ??= defaultProvider());

/**
 * The endpoint of a service: `AWS_ENDPOINT_URL_<ID>` (e.g. `S3`, `SESV2`, `SECRETS_MANAGER`), else
 * `AWS_ENDPOINT_URL`, else AWS's own `https://<host>`.
 */
export function serviceEndpoint(envId: string, host: string): URL {
  const configured = process.env[`AWS_ENDPOINT_URL_${envId}`] ?? process.env.AWS_ENDPOINT_URL;
  return new URL(configured ?? `https://${host}`);
}

export interface AwsRequest {
  /** The signing name (`s3`, `ses`, `secretsmanager`). */
  service: string;
  region: string;
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  url: URL;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** S3 signs the path as sent (already encoded once) and the payload hash as a header. */
  s3?: boolean;
  /** Fixed credentials (tests); the default chain otherwise. */
  credentials?: AwsCredentialIdentity;
}

function httpRequest(request: AwsRequest): HttpRequest {
  const query: Record<string, string> = {};
  request.url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  return {
    method: request.method,
    protocol: request.url.protocol,
    hostname: request.url.hostname,
    port: request.url.port ? Number(request.url.port) : undefined,
    path: request.url.pathname,
    query,
    headers: { ...request.headers, host: request.url.host },
    body: request.body,
  };
}

const signer = (request: AwsRequest) =>
  new SignatureV4({
    service: request.service,
    region: request.region,
    credentials: request.credentials ?? credentialProvider(),
    sha256: Sha256,
    uriEscapePath: !request.s3,
    applyChecksum: request.s3 === true,
  });

/** RFC 3986 encoding, as SigV4's canonical query and the SDK's URLs use it. */
const escapeUri = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function urlOf(signed: HttpRequest): string {
  const url = new URL(`${signed.protocol}//${signed.hostname}${signed.port ? `:${signed.port}` : ''}`);
  const query = Object.entries(signed.query ?? {}).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map(
      (item) => `${escapeUri(key)}=${escapeUri(String(item ?? ''))}`,
    ),
  );
  return `${url.origin}${signed.path}${query.length ? `?${query.join('&')}` : ''}`;
}

/** A refusal by AWS: named by its error code, with the HTTP status where the SDK puts it. */
export class AwsServiceError extends Error {
  readonly $metadata: { httpStatusCode: number; requestId?: string };
  readonly $fault: 'client' | 'server';
  constructor(name: string, message: string, status: number, requestId?: string) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status, requestId };
    this.$fault = status >= 500 ? 'server' : 'client';
  }
}

/** The error code and message of a failed response: JSON (`__type`, `message`), XML (`<Code>`), or the status. */
async function serviceError(response: Response): Promise<AwsServiceError> {
  const text = await response.text().catch(() => '');
  const requestId = response.headers.get('x-amzn-requestid') ?? response.headers.get('x-amz-request-id');
  let code = response.headers.get('x-amzn-errortype')?.split(':')[0] ?? undefined;
  let message: string | undefined;
  if (text.startsWith('{')) {
    try {
      const body = JSON.parse(text) as { __type?: string; code?: string; message?: string; Message?: string };
      code ??= (body.__type ?? body.code)?.split('#').pop();
      message = body.message ?? body.Message;
    } catch {
      // not JSON after all
    }
  } else if (text.includes('<Code>')) {
    code ??= /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  }
  const name = code ?? (response.status === 404 ? 'NotFound' : `Http${response.status}`);
  return new AwsServiceError(name, message ?? name, response.status, requestId ?? undefined);
}

const THROTTLING = /Throttl|TooManyRequests|RequestLimitExceeded|SlowDown|RequestTimeout/;
const MAX_ATTEMPTS = 3;
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(20_000, 100 * 2 ** attempt)));

/**
 * Sends a signed request; resolves to the response when it succeeded (2xx), throws AwsServiceError
 * when AWS refused it. Throttling, 5xx and network failures are tried up to 3 times, as the SDK does,
 * within `signal` when given (else 30 s per attempt).
 */
export async function awsFetch(
  request: AwsRequest,
  options: { signal?: AbortSignal } = {},
): Promise<Response> {
  for (let attempt = 1; ; attempt += 1) {
    const signed = await signer(request).sign(httpRequest(request));
    let response: Response;
    try {
      response = await fetch(urlOf(signed), {
        method: request.method,
        headers: Object.fromEntries(
          Object.entries(signed.headers).filter(([name]) => name.toLowerCase() !== 'host'),
        ),
        body: request.body,
        signal: options.signal ?? AbortSignal.timeout(30_000),
      });
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || options.signal?.aborted) throw error;
      await backoff(attempt);
      continue;
    }
    if (response.ok) return response;
    const error = await serviceError(response);
    const retryable = response.status >= 500 || response.status === 429 || THROTTLING.test(error.name);
    if (!retryable || attempt >= MAX_ATTEMPTS) throw error;
    await backoff(attempt);
  }
}

/** A presigned URL for `request` (S3 downloads), valid `expiresInSeconds`. */
export async function awsPresign(request: AwsRequest, expiresInSeconds: number): Promise<string> {
  const signed = await signer(request).presign(httpRequest(request), { expiresIn: expiresInSeconds });
  return urlOf(signed);
}
