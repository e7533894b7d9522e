import { existsSync, readFileSync } from 'node:fs';

/** The subset of lib/local/state.ts's StackState the test helpers use. */
export interface TestStackState {
  base_url: string;
  urls: { identity_issuer: string; identity_jwks: string; identity_token: string };
  env: Record<string, string>;
  /** The voice relay's WebSocket URL (ConversationRelay). */
  voice_relay_url: string;
}

let cached: TestStackState | undefined;

/** The running local stack (global-setup started it; LOCAL_STACK_STATE names its stack.json). */
export function stackState(): TestStackState {
  if (cached) return cached;
  const path = process.env.LOCAL_STACK_STATE;
  if (!path || !existsSync(path)) {
    throw new Error(
      'No local stack: LOCAL_STACK_STATE is not set (is test/helpers/global-setup.ts configured?)',
    );
  }
  cached = JSON.parse(readFileSync(path, 'utf8')) as TestStackState;
  return cached;
}
