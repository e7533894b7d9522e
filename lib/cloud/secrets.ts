/**
 * Provider secrets: created empty of real values; the operator puts them after deploy. Except the key
 * list cursors are sealed with (functions/platform/pagination.ts): ours, generated.
 */
import type { Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { FunctionSpec } from './catalog-types.js';
import { pascal } from './names.js';
import { SERVICE_NAME } from '../../functions/platform/resources.js';

export type SecretName = NonNullable<FunctionSpec['access']['secrets']>[number];

/** Environment variable that carries a secret's ARN into a function (`SECRET_ARN_IDENTITY_WEBHOOK`). */
export const secretArnEnv = (name: SecretName): string =>
  `SECRET_ARN_${name.replace(/-/g, '_').toUpperCase()}`;

/** Physical name of a provider secret; its value is put by the operator, never kept in the repository. */
export const secretName = (name: SecretName): string => `${SERVICE_NAME}/${name}`;

/** One secret per name any function's access lists. */
export function addSecrets(
  stack: Stack,
  specs: FunctionSpec[],
): Partial<Record<SecretName, secretsmanager.Secret>> {
  const secrets: Partial<Record<SecretName, secretsmanager.Secret>> = {};
  const secretNames = [...new Set(specs.flatMap((spec) => spec.access.secrets ?? []))].sort();
  for (const name of secretNames) {
    secrets[name] = new secretsmanager.Secret(stack, `Secret${name.split('-').map(pascal).join('')}`, {
      secretName: secretName(name),
      ...(name === 'cursor-key'
        ? {
            description: 'Seals list cursors (generated; replacing it only ends the pages clients hold open)',
            generateSecretString: { passwordLength: 64, excludePunctuation: true },
          }
        : name === 'tool-headers-key'
          ? {
              description:
                "Seals agents' tool header values (generated; replacing it makes the stored values unreadable: set them again)",
              generateSecretString: { passwordLength: 64, excludePunctuation: true },
            }
          : {
              description: `Credentials for ${name} (put the real value with aws secretsmanager put-secret-value)`,
            }),
    });
  }
  return secrets;
}
