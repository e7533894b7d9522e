import { banner } from '../../lib/local/stack.js';
import { cliCommand } from '../../lib/local/paths.js';
import type { StackState } from '../../lib/local/state.js';

/** The start-up banner's CLI lines work as printed, with the stack's LOCAL_STATE_DIR when it has one. */
describe('the banner', () => {
  const state = { base_url: 'http://localhost:3000', state_dir: '/tmp/stack-a' } as StackState;

  it('puts LOCAL_STATE_DIR=… before each CLI line when it is set', () => {
    const text = banner(state, [], { LOCAL_STATE_DIR: '/tmp/stack-a' });
    expect(text).toContain('    LOCAL_STATE_DIR=/tmp/stack-a npm run cli -- token --email you@example.com');
    expect(text).toContain('    LOCAL_STATE_DIR=/tmp/stack-a npm run --silent cli -- seed --json');
  });

  it('prints the plain commands when it is not', () => {
    const text = banner(state, [], {});
    expect(text).toContain('\n    npm run cli -- token --email you@example.com');
    expect(text).not.toContain('LOCAL_STATE_DIR=');
  });

  it('quotes a folder that is not one shell word', () => {
    expect(cliCommand({ LOCAL_STATE_DIR: "/tmp/my stack's" })).toBe(
      `LOCAL_STATE_DIR='/tmp/my stack'\\''s' npm run cli --`,
    );
  });
});
