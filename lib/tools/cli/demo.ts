import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliCommand } from '../../local/paths.js';
import { requestAccessToken } from '../../local/tokens.js';
import type { StackState } from '../../local/state.js';
import { ApiClient, ApiError } from './api-client.js';
import { seed, type SeedResult } from './seed.js';

/**
 * The demo data `npm start` brings up with the stack: one organisation made by `seed` (through the
 * public API, as a customer would) and a few contacts, kept in `<state folder>/demo.json` — the file `npm run cli` and
 * the README's commands read. A later start on the same folder keeps it while its API key still
 * answers (DynamoDB Local keeps its data there); a start in memory, or after the data was deleted,
 * makes a new one. `LOCAL_DEMO=off` makes none (the tests and the bench start stacks of their own).
 */
export interface Demo {
  demo: SeedResult;
  /** Made by this start (false: the folder's demo still answered). */
  created: boolean;
  path: string;
}

export const demoPath = (state: StackState) => join(state.state_dir, 'demo.json');

export const demoWanted = (env: NodeJS.ProcessEnv = process.env) =>
  !['off', '0', 'false', 'no'].includes((env.LOCAL_DEMO ?? '').trim().toLowerCase());

export async function ensureDemo(state: StackState, log: (line: string) => void): Promise<Demo> {
  const path = demoPath(state);
  const kept = existsSync(path) ? readDemo(path) : undefined;
  if (kept && (await answers(state, kept))) {
    // The owner's token from the last start may have expired: a fresh one, as `seed` gives.
    const demo = {
      ...kept,
      base_url: state.base_url,
      owner_token: await requestAccessToken(state, kept.owner_email),
    };
    writeFileSync(path, `${JSON.stringify(demo)}\n`);
    return { demo, created: false, path };
  }
  const demo = await seed(state, { plan: 'growth' }, log);
  await addDemoContacts(demo, log);
  await addDemoTool(demo, state.env.DEMO_TOOL_BOOK_INSPECTION_URL, log);
  writeFileSync(path, `${JSON.stringify(demo)}\n`);
  return { demo, created: true, path };
}

/**
 * A few contacts, so the contacts list is not empty: among them the caller of the banner's
 * `call receive` (+61491570199), whose call then shows on the contact with a post-call note.
 */
const DEMO_CONTACTS = [
  {
    first_name: 'Priya',
    last_name: 'Shah',
    phone: '+61491570199',
    email: 'priya.shah@demo.example.com',
    tags: ['buyer'],
  },
  {
    first_name: 'Sam',
    last_name: 'Taylor',
    phone: '+61491570156',
    tags: ['seller'],
    attributes: { suburb: 'Bondi' },
  },
  { first_name: 'Alex', last_name: 'Nguyen', email: 'alex.nguyen@demo.example.com', tags: ['newsletter'] },
];

async function addDemoContacts(demo: SeedResult, log: (line: string) => void): Promise<void> {
  const owner = new ApiClient(demo.base_url, demo.owner_token);
  for (const contact of DEMO_CONTACTS)
    await owner.post(`/api/v1/workspaces/${demo.workspace_id}/contacts`, contact);
  const agentPath = `/api/v1/workspaces/${demo.workspace_id}/agents/${demo.agent_id}`;
  const agent = await owner.get<{ post_call_actions: { type: string }[] }>(agentPath);
  await owner.patch(agentPath, {
    post_call_actions: [...agent.post_call_actions, { type: 'contact_update', enabled: true, config: {} }],
  });
  log(
    `contacts: ${DEMO_CONTACTS.map((c) => `${c.first_name} ${c.last_name}`).join(', ')}; ` +
      "the demo agent's calls update them (post-call action contact_update)",
  );
}

/**
 * The demo agent's function tool: `book_inspection`, served by the demo receiver (which verifies the
 * signature and confirms). "Can you book an inspection?" in `call talk` shows it end to end.
 */
async function addDemoTool(demo: SeedResult, url: string | undefined, log: (line: string) => void) {
  if (!url) return;
  const owner = new ApiClient(demo.base_url, demo.owner_token);
  await owner.patch(`/api/v1/workspaces/${demo.workspace_id}/agents/${demo.agent_id}`, {
    tools: [
      {
        type: 'function',
        name: 'book_inspection',
        description: 'Book an inspection of a property for the caller.',
        parameters: {
          type: 'object',
          properties: {
            date: { type: 'string', description: 'When the caller would like to inspect.' },
            address: { type: 'string', description: 'The property, if the caller named one.' },
          },
          required: ['date'],
        },
        url,
        timeout_ms: 5000,
        speak_during: 'One moment, I am booking that.',
      },
    ],
  });
  log('tool: the demo agent books inspections (book_inspection, served by the demo receiver)');
}

function readDemo(path: string): SeedResult | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<SeedResult>;
    return parsed.api_key && parsed.workspace_id && parsed.agent_id && parsed.owner_email
      ? (parsed as SeedResult)
      : undefined;
  } catch {
    return undefined; // not JSON (an interrupted write): made again
  }
}

/** Whether the demo's API key still reads its agent (401/403/404: its data is gone). */
async function answers(state: StackState, demo: SeedResult): Promise<boolean> {
  try {
    await new ApiClient(state.base_url, demo.api_key).get(
      `/api/v1/workspaces/${demo.workspace_id}/agents/${demo.agent_id}`,
    );
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
    throw error;
  }
}

/** The banner's lines about the demo: its ids, and two commands that work as printed. */
export function demoBanner({ demo, created, path }: Demo, env: NodeJS.ProcessEnv = process.env): string[] {
  const startCall = {
    to_phone: '+61491570156',
    parameters: {
      name: 'Sam',
      listing_id: 'L-1001',
      listing_address: '12 Harbour St, Sydney NSW 2000',
      listing_price: '$1,250,000',
    },
  };
  return [
    `  Demo data (${created ? 'made by this start' : 'kept from the last start'}; ${path}, LOCAL_DEMO=off for none):`,
    `    organisation ${demo.organisation_id} (plan ${demo.plan}), workspace ${demo.workspace_id}, owner ${demo.owner_email}`,
    `    agent ${demo.agent_id} answers ${demo.phone_number}; API key ${demo.api_key}`,
    `  In the dashboard (above), sign in as the demo owner: Email ${demo.owner_email}`,
    '  Place a call with the demo agent (its post-call webhook reaches the demo receiver):',
    `    curl -s -X POST ${demo.base_url}/api/v1/workspaces/${demo.workspace_id}/agents/${demo.agent_id}/start-call \\`,
    `      -H "Authorization: Bearer ${demo.api_key}" -H "Content-Type: application/json" \\`,
    `      -d '${JSON.stringify(startCall)}'`,
    '  Talk to the demo agent yourself (type the caller\'s lines; "goodbye" ends the call; "I\'d like to speak to sales about a listing" and it hands over to Sales):',
    `    ${cliCommand(env, { silent: true })} call talk --to ${demo.phone_number}`,
  ];
}
