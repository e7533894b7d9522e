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

/** A path as one shell word. */
const shellWord = (value: string) =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * The CLI as the banner prints it: `npm run cli --`, with `LOCAL_STATE_DIR=…` in front when the stack
 * runs with one (without it, the CLI would look for a stack in `.local` and not find this one).
 */
export function cliCommand(env: NodeJS.ProcessEnv = process.env, options: { silent?: boolean } = {}): string {
  const npm = options.silent ? 'npm run --silent cli --' : 'npm run cli --';
  return env.LOCAL_STATE_DIR ? `LOCAL_STATE_DIR=${shellWord(defaultStateDir(env))} ${npm}` : npm;
}
