import * as z from 'zod';
import { labelText } from '../platform/validation.js';
import { API_KEY_SCOPES } from '../platform/auth/principal.js';
import { pageOf } from '../platform/pagination.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/** API-key routes (developer tools). Strict bodies: `workspace_id`, `key`, `secret_hash`… are 422. */
export const CreateApiKeyBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: labelText().min(1).max(100),
    scopes: z
      .array(z.enum(API_KEY_SCOPES))
      .min(1)
      .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'each scope may appear once' }),
  }),
);
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const ApiKeyResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
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
  }),
);

/** Create and rotate: the whole key, shown this once. */
export const ApiKeyWithSecretResponse = schemaOnFirstUse(() =>
  ApiKeyResponse.unwrap().extend({ key: z.string() }),
);

export const ApiKeyList = pageOf(ApiKeyResponse);
