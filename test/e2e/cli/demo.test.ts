import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { demoBanner, demoWanted, ensureDemo, type Demo } from '../../../lib/tools/cli/demo.js';
import type { SeedResult } from '../../../lib/tools/cli/seed.js';
import { readStackState, type StackState } from '../../../lib/local/state.js';
import { api, type Json } from '../../helpers/http.js';

/**
 * The demo data `npm start` brings up (lib/tools/cli/demo.ts), against the shared test stack with a state
 * folder of the test's own: made once and written to demo.json, kept by the next start while its API
 * key answers, made again when its data is gone or the file is unreadable. The printed start-call
 * works as printed.
 */
function stateIn(folder: string): StackState {
  const state = readStackState();
  if (!state) throw new Error('no local stack (LOCAL_STACK_STATE)');
  return { ...state, state_dir: folder };
}
const quiet = () => undefined;
const onDisk = (demo: Demo) => JSON.parse(readFileSync(demo.path, 'utf8')) as SeedResult;
const organisations = (demo: Demo) =>
  api('GET', `/api/v1/organisations/${demo.demo.organisation_id}`, { token: demo.demo.owner_token });

describe('the demo organisation of npm start', () => {
  const state = stateIn(mkdtempSync(join(tmpdir(), 'demo-')));
  let first: Demo;

  test('the first start makes it, writes demo.json, and its printed start-call places a call', async () => {
    first = await ensureDemo(state, quiet);
    expect(first.created).toBe(true);
    expect(first.path).toBe(join(state.state_dir, 'demo.json'));
    expect(onDisk(first)).toEqual(first.demo);
    expect((await organisations(first)).status).toBe(200);
    const contacts = await api('GET', `/api/v1/workspaces/${first.demo.workspace_id}/contacts`, {
      token: first.demo.owner_token,
    });
    expect(((contacts.body as Json).items as Json[]).map((c) => c.phone).sort()).toEqual([
      '+61491570156',
      '+61491570199',
      null,
    ]);

    const agent = await api(
      'GET',
      `/api/v1/workspaces/${first.demo.workspace_id}/agents/${first.demo.agent_id}`,
      {
        token: first.demo.owner_token,
      },
    );
    expect(((agent.body as Json).post_call_actions as Json[]).map((a) => a.type)).toEqual([
      'webhook',
      'contact_update',
    ]);

    const lines = demoBanner(first).join('\n');
    expect(lines).toContain(first.demo.api_key);
    // The stack's banner says "Dashboard:" once (the demo's lines do not repeat it); talking to the
    // agent is the README's `call talk`.
    expect(lines).not.toContain('Dashboard:');
    expect(lines).toContain(`call talk --to ${first.demo.phone_number}`);
    const body = /-d '([^']+)'/.exec(lines)?.[1];
    const url = /curl -s -X POST (\S+)/.exec(lines)?.[1];
    expect(url).toBe(
      `${state.base_url}/api/v1/workspaces/${first.demo.workspace_id}/agents/${first.demo.agent_id}/start-call`,
    );
    const call = await api('POST', new URL(url!).pathname, {
      token: first.demo.api_key,
      body: JSON.parse(body!) as Json,
    });
    expect(call.status).toBe(201);
    expect(call.body).toMatchObject({ id: expect.stringMatching(/^call_/) });
  }, 90_000);

  test('the next start keeps it while its key answers (a fresh owner token)', async () => {
    const again = await ensureDemo(state, quiet);
    expect(again.created).toBe(false);
    expect(again.demo).toMatchObject({
      organisation_id: first.demo.organisation_id,
      api_key: first.demo.api_key,
      agent_id: first.demo.agent_id,
    });
    expect(onDisk(again)).toEqual(again.demo);
    expect((await organisations(again)).status).toBe(200);
  }, 60_000);

  test('a demo whose data is gone (its key unknown) is made again', async () => {
    writeFileSync(
      first.path,
      JSON.stringify({ ...first.demo, api_key: 'vak_01KUNKNOWN00000000000000_notasecret' }),
    );
    const remade = await ensureDemo(state, quiet);
    expect(remade.created).toBe(true);
    expect(remade.demo.organisation_id).not.toBe(first.demo.organisation_id);
    expect(onDisk(remade)).toEqual(remade.demo);
  }, 90_000);

  test('an unreadable demo.json is made again', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'demo-'));
    writeFileSync(join(folder, 'demo.json'), '{"organisation_id": "org_');
    const remade = await ensureDemo(stateIn(folder), quiet);
    expect(remade.created).toBe(true);
    expect((await organisations(remade)).status).toBe(200);
  }, 90_000);
});

test('LOCAL_DEMO=off (and 0, false, no) makes none; unset or anything else makes one', () => {
  for (const off of ['off', 'OFF', '0', 'false', 'no', ' off '])
    expect(demoWanted({ LOCAL_DEMO: off })).toBe(false);
  for (const on of [undefined, '', 'on', '1', 'yes']) expect(demoWanted({ LOCAL_DEMO: on })).toBe(true);
});
