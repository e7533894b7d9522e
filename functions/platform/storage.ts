import { awsFetch, awsPresign, serviceEndpoint, type AwsRequest } from './aws-http.js';
import { recordUsage } from './usage.js';
import { config } from './config.js';
import { assertGranted } from './grants.js';

/**
 * The bucket (recordings), through S3's REST API with signed requests (platform/aws-http.ts): the
 * four operations used here do not need the S3 client (~130 KB of every function that stores or
 * serves a recording, or probes the bucket). Virtual-hosted-style URLs in the cloud, path-style where
 * S3_FORCE_PATH_STYLE is set (the local stand-in); the grants are checked before each request and
 * when a URL is presigned (a download URL needs the bucket's read grant), as the client's middleware did.
 */

export function bucketName(): string {
  const name = config().BUCKET_NAME;
  if (!name) throw new Error('BUCKET_NAME is not configured for this function');
  return name;
}

/** An object key in a URL path: each segment encoded, the slashes kept (as the S3 client sends it). */
const keyPath = (key: string): string =>
  key
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join('/');

function s3Request(
  method: AwsRequest['method'],
  bucket: string,
  key: string | undefined,
  extra: Pick<AwsRequest, 'headers' | 'body'> = {},
): AwsRequest {
  const { AWS_REGION: region, S3_FORCE_PATH_STYLE } = config();
  const endpoint = serviceEndpoint('S3', `s3.${region}.amazonaws.com`);
  const path = key === undefined ? '' : `/${keyPath(key)}`;
  // A bucket name with dots cannot be a TLS host name: path-style, as the client does.
  const url =
    S3_FORCE_PATH_STYLE === 'true' || bucket.includes('.')
      ? new URL(`${endpoint.origin}${endpoint.pathname.replace(/\/$/, '')}/${bucket}${path}`)
      : new URL(`${endpoint.protocol}//${bucket}.${endpoint.host}${path || '/'}`);
  return { service: 's3', region, method, url, s3: true, ...extra };
}

export async function putObject(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
  const bucket = bucketName();
  assertGranted('s3', 'PutObject', { Bucket: bucket, Key: key });
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  recordUsage('s3:bytes_put', bytes.byteLength);
  await awsFetch(
    s3Request('PUT', bucket, key, {
      headers: { 'content-type': contentType, 'content-length': String(bytes.byteLength) },
      body: bytes,
    }),
  );
}

export async function objectExists(key: string): Promise<boolean> {
  const bucket = bucketName();
  assertGranted('s3', 'HeadObject', { Bucket: bucket, Key: key });
  try {
    await awsFetch(s3Request('HEAD', bucket, key));
    return true;
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404 || (error as Error).name === 'NotFound' || (error as Error).name === 'NoSuchKey')
      return false;
    throw error;
  }
}

/** Asks whether the bucket is there and reachable (S3 HeadBucket); rejects when it is not. */
export async function headBucket(): Promise<void> {
  const bucket = bucketName();
  assertGranted('s3', 'HeadBucket', { Bucket: bucket });
  await awsFetch(s3Request('HEAD', bucket, undefined));
}

/** A short-lived URL to download an object (recordings are served this way, never proxied). */
export async function signedDownloadUrl(key: string, expiresInSeconds = 300): Promise<string> {
  const bucket = bucketName();
  assertGranted('s3', 'GetObject', { Bucket: bucket, Key: key });
  return awsPresign(
    s3Request('GET', bucket, key, { headers: { 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' } }),
    expiresInSeconds,
  );
}

/** An object's bytes, or undefined when there is no such object. */
export async function getObject(key: string): Promise<Uint8Array | undefined> {
  const bucket = bucketName();
  assertGranted('s3', 'GetObject', { Bucket: bucket, Key: key });
  try {
    const response = await awsFetch(s3Request('GET', bucket, key), { signal: AbortSignal.timeout(120_000) });
    const bytes = new Uint8Array(await response.arrayBuffer());
    recordUsage('s3:bytes_get', bytes.byteLength);
    return bytes;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
      return undefined;
    throw error;
  }
}

/** Deletes an object (S3 DeleteObject); deleting one that is not there is not an error (S3 answers 204). */
export async function deleteObject(key: string): Promise<void> {
  const bucket = bucketName();
  assertGranted('s3', 'DeleteObject', { Bucket: bucket, Key: key });
  try {
    await awsFetch(s3Request('DELETE', bucket, key));
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return;
    throw error;
  }
}

/** An object's size in bytes (S3 HeadObject), or undefined when there is no such object. */
export async function objectSize(key: string): Promise<number | undefined> {
  const bucket = bucketName();
  assertGranted('s3', 'HeadObject', { Bucket: bucket, Key: key });
  try {
    const response = await awsFetch(s3Request('HEAD', bucket, key));
    return Number(response.headers.get('content-length') ?? 0);
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
      return undefined;
    throw error;
  }
}

/**
 * A short-lived URL to upload one object with a plain HTTP PUT (imports: the client sends the file
 * to the bucket, never through the API). Needs the bucket's write grant.
 */
export async function signedUploadUrl(key: string, expiresInSeconds = 3600): Promise<string> {
  const bucket = bucketName();
  assertGranted('s3', 'PutObject', { Bucket: bucket, Key: key });
  return awsPresign(
    s3Request('PUT', bucket, key, { headers: { 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' } }),
    expiresInSeconds,
  );
}
