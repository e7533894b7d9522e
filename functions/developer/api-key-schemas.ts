import { z } from 'zod';
import { API_KEY_SCOPES } from '../platform/auth/principal.js';

/** API-key routes (developer tools). Strict bodies: `workspace_id`, `key`, `secret_hash`… are 422. */
export const CreateApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scopes: z
    .array(z.enum(API_KEY_SCOPES))
    .min(1)
    .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'each scope may appear once' }),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const ApiKeyListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(512).optional(),
});

export const ApiKeyResponse = z.object({
  key_id: z.string(),
  workspace_id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  /** The last characters of the secret, to tell keys apart. */
  secret_hint: z.string(),
  status: z.enum(['active', 'revoked']),
  created_by: z.string(),
  created_at: z.string(),
  rotated_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});

/** Create and rotate: the whole key, shown this once. */
export const ApiKeyWithSecretResponse = ApiKeyResponse.extend({ key: z.string() });

export const ApiKeyList = z.object({ items: z.array(ApiKeyResponse), next_cursor: z.string().nullable() });
