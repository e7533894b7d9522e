import { ulid } from 'ulid';
import { requestAccessToken } from '../../local/tokens.js';
import type { StackState } from '../../local/state.js';
import { ApiClient } from './api-client.js';

export interface SeedResult {
  base_url: string;
  organisation_id: string;
  workspace_id: string;
  agent_id: string;
  agent_without_number_id: string;
  /** The demo agent's handoff target: "I'd like to speak to sales" on a call to the demo number. */
  sales_agent_id: string;
  phone_number: string;
  spare_phone_number: string;
  api_key: string;
  owner_email: string;
  owner_token: string;
  plan: string;
}

type Log = (line: string) => void;

export const DEMO_PROMPT =
  'You are Ava, the friendly receptionist of Harbour Realty. Open homes are on Saturdays from 10am, and ' +
  'inspections can be booked on any weekday. On a call to {{name}} about a listing, it is {{listing_id}} at ' +
  '{{listing_address}}, listed at {{listing_price}}: quote that price when asked.';

export const SALES_PROMPT =
  'You are the sales agent of Harbour Realty. You help buyers with our listings, their prices and offers. ' +
  'Inspections can be booked on any weekday, and contracts are sent the same day.';

/** When the demo receptionist hands a call to Sales (its `handoffs` description). */
export const SALES_HANDOFF =
  "The caller wants to buy, or asks about a listing's price or sale, or asks for sales";

/**
 * A demo organisation, built through the public API exactly as a customer would: the owner signs in
 * (local identity provider), creates the organisation, subscribes (the payments simulator confirms
 * through the signed billing webhook), buys two numbers, creates three agents (the receptionist hands
 * calls over to Sales: its `handoffs`), connects one number and creates an API key with `start_call`. Each run makes a new organisation.
 */
export async function seed(state: StackState, options: { plan: string }, log: Log): Promise<SeedResult> {
  const ownerEmail = `owner-${ulid().toLowerCase()}@demo.example.com`;
  const ownerToken = await requestAccessToken(state, ownerEmail);
  const api = new ApiClient(state.base_url, ownerToken);

  const organisation = await api.post<{ organisation_id: string; default_workspace_id: string }>(
    '/api/v1/organisations',
    {
      name: 'Harbour Realty (demo)',
    },
  );
  const organisationId = organisation.organisation_id;
  const workspaceId = organisation.default_workspace_id;
  log(`organisation ${organisationId}, workspace ${workspaceId}, owner ${ownerEmail}`);

  // Numbers can only be bought on an active paid subscription: subscribe first. A Free demo buys its
  // numbers on Growth and then cancels, moving back to the Free plan with the numbers it has.
  // Only the end state is printed: a Free seed's passing Growth subscription is a step, not its plan.
  const paidPlan = options.plan === 'free' ? 'growth' : options.plan;
  if (paidPlan !== options.plan)
    log(`numbers need a paid plan: buying them on ${paidPlan}, then moving to ${options.plan}`);
  await subscribe(api, organisationId, paidPlan);
  if (paidPlan === options.plan) log(describeBilling(await readBilling(api, organisationId)));
  const number = await api.post<{ id: string; phone_number: string }>(
    `/api/v1/workspaces/${workspaceId}/phone-numbers`,
    {
      country: 'AU',
    },
  );
  const spare = await api.post<{ id: string; phone_number: string }>(
    `/api/v1/workspaces/${workspaceId}/phone-numbers`,
    {
      country: 'AU',
    },
  );
  log(`numbers ${number.phone_number} (for the demo agent) and ${spare.phone_number} (spare)`);

  const receiverUrl = state.env.DEMO_WEBHOOK_RECEIVER_URL;
  const sales = await api.post<{ id: string }>(`/api/v1/workspaces/${workspaceId}/agents`, {
    name: 'Sales',
    prompt: SALES_PROMPT,
  });
  const agent = await api.post<{ id: string }>(`/api/v1/workspaces/${workspaceId}/agents`, {
    name: 'Ava (demo receptionist)',
    prompt: DEMO_PROMPT,
    greeting: 'Hi {{name}}, this is Ava from Harbour Realty.',
    answering_calls: true,
    post_call_actions: receiverUrl ? [{ type: 'webhook', enabled: true, config: { url: receiverUrl } }] : [],
    handoffs: [{ agent_id: sales.id, description: SALES_HANDOFF, context: 'full' }],
  });
  const agentWithoutNumber = await api.post<{ id: string }>(`/api/v1/workspaces/${workspaceId}/agents`, {
    name: 'Max (no number yet)',
    prompt: 'You are Max. Answer questions about opening hours.',
    greeting: 'Hello, Max speaking.',
  });
  await api.patch(`/api/v1/workspaces/${workspaceId}/phone-numbers/${number.id}`, { agent_id: agent.id });
  log(
    `agents ${agent.id} (connected to ${number.phone_number}; hands over to Sales ${sales.id}) and ${agentWithoutNumber.id} (no number)`,
  );

  const key = await api.post<{ key: string }>(`/api/v1/workspaces/${workspaceId}/api-keys`, {
    name: 'Demo key',
    scopes: ['start_call', 'calls:read', 'agents:read'],
  });

  if (options.plan === 'free') {
    await api.request('DELETE', `/api/v1/organisations/${organisationId}/billing/subscription`);
    log(describeBilling(await waitForPlan(api, organisationId, 'free')));
  }

  return {
    base_url: state.base_url,
    organisation_id: organisationId,
    workspace_id: workspaceId,
    agent_id: agent.id,
    agent_without_number_id: agentWithoutNumber.id,
    sales_agent_id: sales.id,
    phone_number: number.phone_number,
    spare_phone_number: spare.phone_number,
    api_key: key.key,
    owner_email: ownerEmail,
    owner_token: ownerToken,
    plan: options.plan,
  };
}

async function subscribe(api: ApiClient, organisationId: string, plan: string): Promise<void> {
  await api.post(`/api/v1/organisations/${organisationId}/billing/subscription`, { plan });
  await waitForPlan(api, organisationId, plan);
}

interface Billing {
  plan: string;
  status: string;
  credit_balance: number;
}

const readBilling = (api: ApiClient, organisationId: string) =>
  api.get<Billing>(`/api/v1/organisations/${organisationId}/billing`);

const describeBilling = (billing: Billing) =>
  `billing: plan ${billing.plan}, status ${billing.status}, ${billing.credit_balance} credits`;

async function waitForPlan(api: ApiClient, organisationId: string, plan: string): Promise<Billing> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const billing = await readBilling(api, organisationId);
    if (billing.plan === plan && (plan === 'free' || billing.status === 'active')) return billing;
    if (Date.now() > deadline)
      throw new Error(`the subscription did not become ${plan} within 30 s (now ${JSON.stringify(billing)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
