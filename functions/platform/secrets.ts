import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from './config.js';
import { assertGranted, grantsMiddleware } from './grants.js';

/**
 * Provider secrets in the cloud: Secrets Manager, the ARN in `SECRET_ARN_<NAME>` (set by the stack for
 * the functions whose catalog entry lists the secret). Read once per container, lazily; a failed read
 * is retried on the next call.
 */
let client: SecretsManagerClient | undefined;
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
    if (!client) {
      client = new SecretsManagerClient({ region: config().AWS_REGION });
      client.middlewareStack.add(grantsMiddleware('secretsmanager'), {
        step: 'initialize',
        name: 'enforceGrants',
      });
    }
    value = client.send(new GetSecretValueCommand({ SecretId: arn })).then((result) => {
      if (!result.SecretString) throw new Error(`secret ${name} has no string value`);
      return result.SecretString;
    });
    value.catch(() => cache.delete(name));
    cache.set(name, value);
  }
  return value;
}
