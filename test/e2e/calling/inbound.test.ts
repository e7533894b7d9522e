import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { repoRoot } from '../../../lib/local/paths.js';
import { api, type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { apiKey, readyToCall, waitForCall, ws, type Tenant } from './fixtures.js';

/**
 * Inbound calls as a newcomer makes them: `npm run cli -- call receive --from … --to …` has the
 * telephony simulator dial one of our numbers, and prints the call's id (or that it was refused).
 */

const run = promisify(execFile);
const CALLER = '+61491570199';

let tenant: Tenant;
let agent: Json;
let number: Json;
let key: string;

beforeAll(async () => {
  ({ tenant, agent, number } = await readyToCall());
  ({ key } = await apiKey(tenant, ['start_call', 'calls:read']));
});

/** The CLI, as `npm run cli --` runs it, against the test stack (LOCAL_STACK_STATE names it). */
async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
    cwd: repoRoot,
    env: process.env,
  });
  return stdout.trim();
}

const inboundCalls = async (): Promise<Json[]> =>
  (await api('GET', `${ws(tenant)}/calls?direction=inbound`, { token: key })).body.items;

describe('npm run cli -- call receive', () => {
  it('dials one of our numbers: an answering agent takes the call, and the CLI prints its id', async () => {
    const json = JSON.parse(
      await cli('call', 'receive', '--from', CALLER, '--to', number.phone_number, '--json'),
    );
    expect(json).toMatchObject({ accepted: true, call_id: expect.stringMatching(/^call_/) });
    const call = await waitForCall(tenant, json.call_id);
    expect(call).toMatchObject({
      direction: 'inbound',
      status: 'completed',
      from_phone: CALLER,
      to_phone: number.phone_number,
      agent_id: agent.id,
    });
    const line = await cli('call', 'receive', '--from', CALLER, '--to', number.phone_number);
    expect(line).toMatch(/^call_\w+ in progress: an agent answered/);
    await waitForCall(tenant, line.split(' ')[0]);
  });

  it('refuses a number that is not E.164 (exit 2 for usage, 1 for a bad number)', async () => {
    await expect(cli('call', 'receive', '--from', CALLER)).rejects.toMatchObject({ code: 2 });
    await expect(
      cli('call', 'receive', '--from', '0491570199', '--to', number.phone_number),
    ).rejects.toMatchObject({ code: 1 });
  });
});

describe('a call nobody answers', () => {
  it('a number nobody holds is refused and logs nothing', async () => {
    const before = (await inboundCalls()).length;
    const json = JSON.parse(await cli('call', 'receive', '--from', CALLER, '--to', '+61255501111', '--json'));
    expect(json.accepted).toBe(false);
    expect(await cli('call', 'receive', '--from', CALLER, '--to', '+61255501111')).toMatch(
      /^refused: nobody answered \+61255501111 \(provider call CA\w+\)/,
    );
    await waitForQuiescence();
    expect(await inboundCalls()).toHaveLength(before);
  });
});
