import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in lib/local/). Handler entries in the catalog are relative to it. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the local stack keeps its state: `LOCAL_STATE_DIR`, else `.local` under the repository root. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.LOCAL_STATE_DIR;
  if (!configured) return resolve(repoRoot, '.local');
  return isAbsolute(configured) ? configured : resolve(repoRoot, configured);
}
