import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from './config.js';
import { grantsMiddleware } from './grants.js';

let s3: S3Client | undefined;

export function s3Client(): S3Client {
  if (!s3) {
    s3 = new S3Client({
      region: config().AWS_REGION,
      forcePathStyle: config().S3_FORCE_PATH_STYLE === 'true',
    });
    // Also runs when a URL is presigned: a download URL needs the bucket's read grant.
    s3.middlewareStack.add(grantsMiddleware('s3'), { step: 'initialize', name: 'enforceGrants' });
  }
  return s3;
}

export function bucketName(): string {
  const name = config().BUCKET_NAME;
  if (!name) throw new Error('BUCKET_NAME is not configured for this function');
  return name;
}

export async function putObject(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
  await s3Client().send(
    new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: body, ContentType: contentType }),
  );
}

export async function objectExists(key: string): Promise<boolean> {
  try {
    await s3Client().send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }));
    return true;
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404 || (error as Error).name === 'NotFound' || (error as Error).name === 'NoSuchKey')
      return false;
    throw error;
  }
}

/** A short-lived URL to download an object (recordings are served this way, never proxied). */
export async function signedDownloadUrl(key: string, expiresInSeconds = 300): Promise<string> {
  return getSignedUrl(s3Client(), new GetObjectCommand({ Bucket: bucketName(), Key: key }), {
    expiresIn: expiresInSeconds,
  });
}
