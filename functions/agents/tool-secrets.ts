import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { secretString } from '../platform/secrets.js';

/**
 * Tools' header values (API keys of the customer's endpoints), sealed at rest: AES-256-GCM with a key
 * from the `tool-headers-key` secret (the stack's generated secret, read as platform/pagination.ts
 * reads `cursor-key`); locally the TOOL_HEADERS_SECRET variable, or a fixed local key. Each value is
 * its own sealed record with an id (`tsec_…`), bound to its workspace, agent and id (the AAD), so
 * a record elsewhere (an agent's version) can point at it by id without copying it, and a sealed
 * value moved to another agent or tenant does not open.
 */

const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'tool-header.v1';
/** The local stack's key when TOOL_HEADERS_SECRET is not set (never used in the cloud). */
export const LOCAL_TOOL_HEADERS_SECRET = 'local-tool-headers-key-0001';

let dataKey: Promise<Buffer> | undefined;

function sealingKey(): Promise<Buffer> {
  const local =
    process.env.TOOL_HEADERS_SECRET || (process.env.STAGE === 'cloud' ? '' : LOCAL_TOOL_HEADERS_SECRET);
  dataKey ??= (local ? Promise.resolve(local) : secretString('tool-headers-key')).then((secret) =>
    createHash('sha256').update(secret.trim()).digest(),
  );
  dataKey.catch(() => {
    dataKey = undefined;
  });
  return dataKey;
}

/** Where a sealed value belongs: it opens only there. */
export interface SecretBinding {
  workspaceId: string;
  agentId: string;
  secretId: string;
}

const aad = (binding: SecretBinding) =>
  Buffer.from(`${VERSION}|${binding.workspaceId}|${binding.agentId}|${binding.secretId}`, 'utf8');

/** base64url of IV, ciphertext and tag. */
export async function sealToolSecret(plain: string, binding: SecretBinding): Promise<string> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', await sealingKey(), iv);
  cipher.setAAD(aad(binding));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The plain value; throws when it was changed, sealed with another key or belongs elsewhere. */
export async function openToolSecret(sealed: string, binding: SecretBinding): Promise<string> {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error('sealed tool secret is malformed');
  const decipher = createDecipheriv('aes-256-gcm', await sealingKey(), bytes.subarray(0, IV_BYTES));
  decipher.setAAD(aad(binding));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}

/**
 * The value's digest for this agent: HMAC-SHA256 under a key derived from the sealing key, over the
 * workspace, the agent and the value (base64url). Equal values of one agent have one digest, so a
 * value sent again is found among the sealed ones without opening them; nothing outside the agent
 * can compare digests, and without the key a digest says nothing of the value.
 */
export async function toolSecretDigest(
  plain: string,
  owner: { workspaceId: string; agentId: string },
): Promise<string> {
  const key = createHash('sha256')
    .update('tool-header-digest.v1')
    .update(await sealingKey())
    .digest();
  return createHmac('sha256', key)
    .update(`${owner.workspaceId}|${owner.agentId}|`)
    .update(plain, 'utf8')
    .digest('base64url');
}
