import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for one JSON request (the SES v2 REST API), with node:crypto only — the
 * project has no SES client package. Signs `host`, `x-amz-date`, `x-amz-security-token` (when there
 * is a session token, as in Lambda) and `content-type`.
 */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
}

const sha256Hex = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding, as SigV4 wants it (each path segment encoded once for non-S3 services). */
const uriEncode = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(url: URL): string {
  return [...url.searchParams.entries()]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

const amzDate = (at: Date): string => at.toISOString().replace(/[:-]|\.\d{3}/g, '');

/** Returns the request's headers plus `x-amz-date`, the session token and `authorization`. */
export function signRequest(
  request: SignableRequest,
  options: { credentials: AwsCredentials; region: string; service: string; at: Date },
): Record<string, string> {
  const { credentials, region, service } = options;
  const date = amzDate(options.at);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value.trim().replace(/\s+/g, ' ');
  headers.host = request.url.host;
  headers['x-amz-date'] = date;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonicalPath = request.url.pathname.split('/').map((s) => uriEncode(decodeURIComponent(s))).join('/') || '/';
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath,
    canonicalQuery(request.url),
    names.map((n) => `${n}:${headers[n]}\n`).join(''),
    signedHeaders,
    sha256Hex(request.body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}
