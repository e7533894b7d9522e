import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import Stripe from 'stripe';
import { monotonicFactory } from 'ulid';
import { isPaidPlan, PLANS, priceLookupKey, type PaidPlanId } from '../../../../functions/billing/plans.js';
import type { SimulatorInvoiceItem } from '../../../../functions/providers/payments/index.js';

/**
 * The local payment provider: a small HTTP service that plays Stripe's part. The simulator adapter
 * (`functions/providers/payments/simulator.ts`) calls it as the Stripe adapter calls Stripe; it keeps customers, subscriptions,
 * checkout sessions and invoice items, and tells billing what happened the way Stripe does: by
 * Stripe-shaped events POSTed to the billing webhook, signed with Stripe's scheme (the `stripe`
 * library's own test-header helper) with a secret made at start-up.
 *
 * The simulated customer pays at once: a checkout completes a moment after it is created. Test and
 * demo controls (`/control/...`) make a renewal payment fail or succeed, and resend an event.
 */

interface SimCustomer {
  id: string;
  email: string;
  name: string;
  metadata: Record<string, string>;
}
interface SimSubscription {
  id: string;
  itemId: string;
  customer: string;
  plan: PaidPlanId;
  status: 'active' | 'past_due' | 'canceled';
  metadata: Record<string, string>;
  created: number;
}
interface SimSession {
  id: string;
  mode: 'subscription' | 'payment';
  customer: string;
  metadata: Record<string, string>;
  plan?: PaidPlanId;
  credits?: number;
  unitAmount?: number;
  currency: string;
  status: 'open' | 'complete';
  subscription?: string;
  url: string;
}

export interface SimEvent {
  id: string;
  type: string;
  created: number;
  payload: string;
  deliveries: { at: string; status: number | null; error?: string }[];
}
interface SimState {
  customers: Record<string, SimCustomer>;
  subscriptions: Record<string, SimSubscription>;
  sessions: Record<string, SimSession>;
  invoiceItems: Record<string, SimulatorInvoiceItem>;
  /** Idempotency key → the response first given for it. */
  idempotent: Record<string, unknown>;
  events: SimEvent[];
}

export interface PaymentsSimulatorOptions {
  /** Where events are delivered: the billing webhook (`<gateway>/webhooks/billing`). */
  webhookUrl: string;
  /** Default: a new random `whsec_…`. */
  webhookSecret?: string;
  /** Keep the simulator's records across restarts (the local stack's data folder). */
  stateFile?: string;
  port?: number;
  /** How long the simulated customer takes to pay at checkout. Default 50 ms. */
  checkoutDelayMs?: number;
}

export interface PaymentsSimulator {
  url: string;
  port: number;
  webhookSecret: string;
  stop(): Promise<void>;
}

class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ulid = monotonicFactory();
const nowSeconds = () => Math.floor(Date.now() / 1000);
const DELIVERY_BACKOFF_MS = [0, 250, 500, 1000, 2000, 4000];

function emptyState(): SimState {
  return { customers: {}, subscriptions: {}, sessions: {}, invoiceItems: {}, idempotent: {}, events: [] };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new SimError(400, 'body must be a JSON object');
  return parsed as Record<string, unknown>;
}

const str = (body: Record<string, unknown>, name: string): string => {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw new SimError(400, `${name} is required`);
  return value;
};
const int = (body: Record<string, unknown>, name: string): number => {
  const value = body[name];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new SimError(400, `${name} must be a whole number`);
  return value;
};
const paidPlan = (body: Record<string, unknown>): PaidPlanId => {
  const plan = str(body, 'plan');
  if (!isPaidPlan(plan)) throw new SimError(400, `unknown plan ${plan}`);
  return plan;
};

export async function startPaymentsSimulator(options: PaymentsSimulatorOptions): Promise<PaymentsSimulator> {
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`;
  const checkoutDelayMs = options.checkoutDelayMs ?? 50;
  const state: SimState =
    options.stateFile && existsSync(options.stateFile)
      ? { ...emptyState(), ...(JSON.parse(readFileSync(options.stateFile, 'utf8')) as Partial<SimState>) }
      : emptyState();
  let baseUrl = '';
  let stopping = false;
  const timers = new Set<NodeJS.Timeout>();
  // Events are delivered one after another, in the order they happened.
  let deliveries: Promise<void> = Promise.resolve();

  const save = () => {
    if (!options.stateFile) return;
    mkdirSync(dirname(options.stateFile), { recursive: true });
    const tmp = `${options.stateFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, options.stateFile);
  };

  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopping) fn();
    }, ms);
    timers.add(timer);
  };

  // ── Stripe-shaped objects ──────────────────────────────────────────────────────────────────────
  const subscriptionObject = (sub: SimSubscription) => ({
    id: sub.id,
    object: 'subscription',
    customer: sub.customer,
    status: sub.status,
    metadata: sub.metadata,
    cancel_at_period_end: false,
    created: sub.created,
    livemode: false,
    items: {
      object: 'list',
      data: [
        {
          id: sub.itemId,
          object: 'subscription_item',
          quantity: 1,
          price: {
            id: `price_sim_${sub.plan}`,
            object: 'price',
            lookup_key: priceLookupKey(sub.plan),
            unit_amount: PLANS[sub.plan].monthlyPriceAud * 100,
            currency: 'aud',
            recurring: { interval: 'month', interval_count: 1 },
          },
        },
      ],
    },
  });
  const invoiceObject = (sub: SimSubscription, status: 'paid' | 'open', billingReason: string) => ({
    id: `in_sim_${ulid()}`,
    object: 'invoice',
    customer: sub.customer,
    status,
    billing_reason: billingReason,
    currency: 'aud',
    amount_due: PLANS[sub.plan].monthlyPriceAud * 100,
    amount_paid: status === 'paid' ? PLANS[sub.plan].monthlyPriceAud * 100 : 0,
    parent: {
      type: 'subscription_details',
      subscription_details: { subscription: sub.id, metadata: sub.metadata },
    },
  });
  const sessionObject = (session: SimSession) => {
    const amount = session.mode === 'payment' ? (session.credits ?? 0) * (session.unitAmount ?? 0) : 0;
    return {
      id: session.id,
      object: 'checkout.session',
      mode: session.mode,
      customer: session.customer,
      client_reference_id: session.metadata.organisation_id ?? null,
      metadata: session.metadata,
      status: session.status,
      payment_status: session.status === 'complete' ? 'paid' : 'unpaid',
      amount_subtotal: amount,
      amount_total: amount,
      currency: session.currency,
      subscription: session.subscription ?? null,
      url: session.url,
    };
  };

  // ── Events ─────────────────────────────────────────────────────────────────────────────────────
  async function deliver(event: SimEvent): Promise<void> {
    for (const wait of DELIVERY_BACKOFF_MS) {
      if (stopping) return;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const signature = Stripe.webhooks.generateTestHeaderString({
        payload: event.payload,
        secret: webhookSecret,
      });
      try {
        const response = await fetch(options.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature },
          body: event.payload,
          signal: AbortSignal.timeout(10_000),
        });
        await response.text();
        event.deliveries.push({ at: new Date().toISOString(), status: response.status });
        save();
        if (response.ok) return;
      } catch (error) {
        event.deliveries.push({ at: new Date().toISOString(), status: null, error: String(error) });
        save();
      }
    }
  }

  const enqueue = (event: SimEvent) => {
    deliveries = deliveries.then(() => deliver(event));
  };

  function emit(type: string, object: unknown): SimEvent {
    const created = nowSeconds();
    const id = `evt_sim_${ulid()}`;
    const payload = JSON.stringify(
      {
        id,
        object: 'event',
        api_version: Stripe.API_VERSION,
        created,
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
        data: { object },
      },
      null,
      2,
    );
    const event: SimEvent = { id, type, created, payload, deliveries: [] };
    state.events.push(event);
    save();
    enqueue(event);
    return event;
  }

  // ── Provider operations ───────────────────────────────────────────────────────────────────────
  const subscriptionById = (id: string): SimSubscription => {
    const sub = state.subscriptions[id];
    if (!sub) throw new SimError(404, `No such subscription: '${id}'`);
    return sub;
  };
  const customerById = (id: string): SimCustomer => {
    const customer = state.customers[id];
    if (!customer) throw new SimError(404, `No such customer: '${id}'`);
    return customer;
  };

  function completeCheckout(sessionId: string): void {
    const session = state.sessions[sessionId];
    if (!session || session.status !== 'open') return;
    session.status = 'complete';
    if (session.mode === 'subscription' && session.plan) {
      const sub: SimSubscription = {
        id: `sub_sim_${ulid()}`,
        itemId: `si_sim_${ulid()}`,
        customer: session.customer,
        plan: session.plan,
        status: 'active',
        metadata: { ...session.metadata, plan: session.plan },
        created: nowSeconds(),
      };
      state.subscriptions[sub.id] = sub;
      session.subscription = sub.id;
      emit('checkout.session.completed', sessionObject(session));
      emit('customer.subscription.created', subscriptionObject(sub));
      emit('invoice.paid', invoiceObject(sub, 'paid', 'subscription_create'));
    } else {
      emit('checkout.session.completed', sessionObject(session));
    }
    save();
  }

  function idempotent<T>(key: string | undefined, produce: () => T): T {
    if (key && key in state.idempotent) return state.idempotent[key] as T;
    const result = produce();
    if (key) state.idempotent[key] = result;
    save();
    return result;
  }

  async function route(
    method: string,
    path: string,
    req: IncomingMessage,
  ): Promise<{ status: number; body: unknown; html?: string }> {
    const key = req.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' && key !== '' ? key : undefined;
    const parts = path.split('/').filter(Boolean);

    if (method === 'POST' && path === '/v1/customers') {
      const body = await readJson(req);
      return {
        status: 200,
        body: idempotent(idempotencyKey, () => {
          const customer: SimCustomer = {
            id: `cus_sim_${ulid()}`,
            email: str(body, 'email'),
            name: str(body, 'name'),
            metadata: { organisation_id: str(body, 'organisation_id') },
          };
          state.customers[customer.id] = customer;
          return { id: customer.id };
        }),
      };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const body = await readJson(req);
      const customer = customerById(str(body, 'customer'));
      const mode = str(body, 'mode');
      const id = `cs_sim_${ulid()}`;
      const organisationId = str(body, 'organisation_id');
      let session: SimSession;
      if (mode === 'subscription') {
        const plan = paidPlan(body);
        session = {
          id,
          mode,
          customer: customer.id,
          plan,
          currency: 'aud',
          metadata: { organisation_id: organisationId, plan, purpose: 'subscription' },
          status: 'open',
          url: `${baseUrl}/checkout/${id}`,
        };
      } else if (mode === 'payment') {
        const credits = int(body, 'credits');
        session = {
          id,
          mode,
          customer: customer.id,
          credits,
          unitAmount: int(body, 'unit_amount'),
          currency: str(body, 'currency'),
          metadata: { organisation_id: organisationId, purpose: 'credits', credits: String(credits) },
          status: 'open',
          url: `${baseUrl}/checkout/${id}`,
        };
      } else {
        throw new SimError(400, `unknown mode ${mode}`);
      }
      state.sessions[id] = session;
      save();
      later(checkoutDelayMs, () => completeCheckout(id));
      return { status: 200, body: { id, url: session.url } };
    }
    if (method === 'POST' && parts[0] === 'v1' && parts[1] === 'subscriptions' && parts.length === 4) {
      const sub = subscriptionById(parts[2]);
      const body = await readJson(req);
      if (sub.status === 'canceled') throw new SimError(400, `subscription ${sub.id} is canceled`);
      if (parts[3] === 'change') {
        sub.plan = paidPlan(body);
        sub.metadata = { ...sub.metadata, plan: sub.plan };
        emit('customer.subscription.updated', subscriptionObject(sub));
        emit('invoice.paid', invoiceObject(sub, 'paid', 'subscription_update'));
        return { status: 200, body: { id: sub.id, plan: sub.plan } };
      }
      if (parts[3] === 'cancel') {
        sub.status = 'canceled';
        emit('customer.subscription.deleted', subscriptionObject(sub));
        return { status: 200, body: { id: sub.id, status: sub.status } };
      }
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      const body = await readJson(req);
      const customer = customerById(str(body, 'customer'));
      return { status: 200, body: { url: `${baseUrl}/portal/${customer.id}` } };
    }
    if (method === 'POST' && path === '/v1/invoiceitems') {
      const body = await readJson(req);
      const customer = customerById(str(body, 'customer'));
      const sub = subscriptionById(str(body, 'subscription'));
      return {
        status: 200,
        body: idempotent(idempotencyKey, () => {
          const item: SimulatorInvoiceItem = {
            id: `ii_sim_${ulid()}`,
            customer: customer.id,
            subscription: sub.id,
            amount: int(body, 'amount'),
            currency: str(body, 'currency'),
            description: str(body, 'description'),
          };
          state.invoiceItems[item.id] = item;
          return { id: item.id };
        }),
      };
    }

    // ── Pages the URLs point at ──
    if (method === 'GET' && parts[0] === 'checkout' && parts.length === 2) {
      const session = state.sessions[parts[1]];
      if (!session) throw new SimError(404, 'No such checkout session');
      return {
        status: 200,
        body: null,
        html: `Simulated checkout ${session.id} (${session.mode}): ${session.status}.`,
      };
    }
    if (method === 'GET' && parts[0] === 'portal' && parts.length === 2) {
      const customer = customerById(parts[1]);
      const subs = Object.values(state.subscriptions).filter((s) => s.customer === customer.id);
      return {
        status: 200,
        body: null,
        html: `Simulated customer portal of ${customer.name} <${customer.email}>: ${subs.map((s) => `${s.plan} (${s.status})`).join(', ') || 'no subscription'}.`,
      };
    }

    // ── Controls (tests and demos) ──
    if (parts[0] === 'control') {
      if (method === 'GET' && path === '/control/events') {
        return { status: 200, body: state.events.map(({ payload: _payload, ...event }) => event) };
      }
      if (method === 'GET' && parts[1] === 'events' && parts.length === 3) {
        const event = state.events.find((e) => e.id === parts[2]);
        if (!event) throw new SimError(404, 'No such event');
        return { status: 200, body: { ...event, payload: JSON.parse(event.payload) as unknown } };
      }
      if (method === 'POST' && parts[1] === 'events' && parts[3] === 'resend') {
        const event = state.events.find((e) => e.id === parts[2]);
        if (!event) throw new SimError(404, 'No such event');
        const before = event.deliveries.length;
        enqueue(event);
        await deliveries;
        return { status: 200, body: { id: event.id, delivery: event.deliveries[before] ?? null } };
      }
      if (method === 'GET' && path === '/control/invoiceitems') {
        return { status: 200, body: Object.values(state.invoiceItems) };
      }
      if (method === 'GET' && parts[1] === 'subscriptions' && parts.length === 3) {
        return { status: 200, body: subscriptionById(parts[2]) };
      }
      if (method === 'POST' && parts[1] === 'subscriptions' && parts.length === 4) {
        const sub = subscriptionById(parts[2]);
        if (sub.status === 'canceled') throw new SimError(400, `subscription ${sub.id} is canceled`);
        if (parts[3] === 'payment-failed') {
          sub.status = 'past_due';
          emit('invoice.payment_failed', invoiceObject(sub, 'open', 'subscription_cycle'));
          emit('customer.subscription.updated', subscriptionObject(sub));
        } else if (parts[3] === 'payment-succeeded') {
          sub.status = 'active';
          emit('invoice.paid', invoiceObject(sub, 'paid', 'subscription_cycle'));
          emit('customer.subscription.updated', subscriptionObject(sub));
        } else {
          throw new SimError(404, 'Not found');
        }
        await deliveries;
        return { status: 200, body: { id: sub.id, status: sub.status } };
      }
      if (method === 'POST' && path === '/control/settle') {
        // Wait until every event so far has been delivered (or given up on).
        await deliveries;
        return { status: 200, body: { events: state.events.length } };
      }
    }
    throw new SimError(404, 'Not found');
  }

  const server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    route(req.method ?? 'GET', url.pathname, req)
      .then((result) => {
        if (result.html !== undefined) {
          res.writeHead(result.status, { 'content-type': 'text/html; charset=utf-8' });
          res.end(`<!doctype html><title>Payments simulator</title><p>${escapeHtml(result.html)}</p>`);
          return;
        }
        res.writeHead(result.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(result.body));
      })
      .catch((error: unknown) => {
        const status = error instanceof SimError ? error.status : error instanceof SyntaxError ? 400 : 500;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: error instanceof Error ? error.message : String(error) } }),
        );
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;

  // Checkouts left open by a previous run complete now.
  for (const session of Object.values(state.sessions)) {
    if (session.status === 'open') later(checkoutDelayMs, () => completeCheckout(session.id));
  }

  return {
    url: baseUrl,
    port,
    webhookSecret,
    stop: async () => {
      stopping = true;
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}
