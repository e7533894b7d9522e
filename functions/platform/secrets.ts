import { awsFetch, serviceEndpoint } from './aws-http.js';
import { config } from './config.js';
import { assertGranted } from './grants.js';

/**
 * Provider secrets in the cloud: Secrets Manager, the ARN in `SECRET_ARN_<NAME>` (set by the stack for
 * the functions whose catalog entry lists the secret). Read once per container, lazily; a failed read
 * is retried on the next call. `GetSecretValue` is one signed JSON request (platform/aws-http.ts), so
 * the Secrets Manager client is not bundled for it.
 */
const cache = new Map<string, Promise<string>>();

export const secretArnEnv = (name: string): string => `SECRET_ARN_${name.replace(/-/g, '_').toUpperCase()}`;

export function secretString(name: string): Promise<string> {
  let value = cache.get(name);
  if (value) {
    // Locally every function shares this cache: one that was not granted the secret is refused still.
    try {
      assertGranted('secretsmanager', 'GetSecretValue', { SecretId: process.env[secretArnEnv(name)] });
    } catch (error) {
      return Promise.reject(error);
    }
  } else {
    const arn = process.env[secretArnEnv(name)];
    if (!arn) return Promise.reject(new Error(`${secretArnEnv(name)} is not set for this function`));
    value = getSecretValue(arn).then((result) => {
      if (!result.SecretString) throw new Error(`secret ${name} has no string value`);
      return result.SecretString;
    });
    value.catch(() => cache.delete(name));
    cache.set(name, value);
  }
  return value;
}

/** Secrets Manager `GetSecretValue` (JSON 1.1 protocol), checked against the grants first. */
export async function getSecretValue(
  secretId: string,
  options: { endpoint?: string; credentials?: { accessKeyId: string; secretAccessKey: string } } = {},
): Promise<{ SecretString?: string }> {
  assertGranted('secretsmanager', 'GetSecretValue', { SecretId: secretId });
  const region = config().AWS_REGION;
  const url = options.endpoint
    ? new URL(options.endpoint)
    : serviceEndpoint('SECRETS_MANAGER', `secretsmanager.${region}.amazonaws.com`);
  const response = await awsFetch({
    service: 'secretsmanager',
    region,
    method: 'POST',
    url: new URL('/', url),
    headers: {
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'secretsmanager.GetSecretValue',
    },
    body: JSON.stringify({ SecretId: secretId }),
    credentials: options.credentials,
  });
  return (await response.json()) as { SecretString?: string };
}
