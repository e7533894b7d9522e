import { beforeAll, describe, expect, test } from '@jest/globals';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import { chargeSms } from '../../../functions/billing/metering.js';
import { callUnits, METERING_RULES } from '../../../functions/billing/rules.js';
import { api } from '../../helpers/http.js';
import { member, organisation, user, UNKNOWN, type Org, type User } from '../access/fixtures.js';
import { billingPath, fullLedger } from './fixtures.js';

/**
 * Who may see and change billing (docs/api.md: only the owner manages it; every member views it), and
 * what bad input does (422, nothing changed), through the real gateway.
 */
let org: Org;
let other: Org;
let admin: User;
let regular: User;
let stranger: User;
let apiKey: string;

beforeAll(async () => {
  org = await organisation('billing-owner');
  other = await organisation('billing-other');
  admin = await member(org, 'billing-admin', 'admin');
  regular = await member(org, 'billing-regular', 'regular');
  stranger = await user('billing-stranger');
  const key = await api('POST', `/api/v1/workspaces/${org.workspaceId}/api-keys`, {
    token: org.owner.token,
    body: { name: 'billing tests', scopes: ['start_call'] },
  });
  expect(key.status).toBe(201);
  apiKey = key.body.key;
});

type BillingRequest = [
  'GET' | 'POST' | 'DELETE',
  '' | '/ledger' | '/subscription' | '/portal-session' | '/credits',
  object | undefined,
];
const READS: BillingRequest[] = [
  ['GET', '', undefined],
  ['GET', '/ledger', undefined],
];
const WRITES: BillingRequest[] = [
  ['POST', '/subscription', { plan: 'growth' }],
  ['DELETE', '/subscription', undefined],
  ['POST', '/portal-session', {}],
  ['POST', '/credits', { quantity: 500 }],
];

/** The account and ledger as they stand, to prove a refused request changed nothing. */
async function snapshot(o: Org) {
  const account = await getBillingAccount(o.organisationId, { consistent: true });
  return { account, ledger: await fullLedger(o.organisationId, o.owner.token) };
}

describe('reading billing', () => {
  test.each(READS)('%s billing%s: every member may read', async (method, rest, _body) => {
    for (const who of [org.owner, admin, regular]) {
      const res = await api(method, billingPath(org.organisationId, rest), { token: who.token });
      expect(res.status).toBe(200);
    }
  });

  test('the billing view: Free plan, 500 credits, the current period, usage by kind', async () => {
    const res = await api('GET', billingPath(org.organisationId), { token: regular.token });
    expect(res.body).toMatchObject({
      organisation_id: org.organisationId,
      plan: 'free',
      status: 'none',
      in_good_standing: true,
      credit_balance: 500,
      balance_units: 30_000,
      units_per_credit: 60,
      agents_suspended: false,
      included_credits_this_period: 500,
      credits_used_this_period: 0,
    });
    expect(res.body.usage.map((u: { kind: string }) => u.kind)).toEqual([
      'call',
      'memories',
      'sms',
      'evaluation',
    ]);
    expect(Date.parse(res.body.period.end)).toBeGreaterThan(Date.now());
  });

  test('the ledger shows the opening grant', async () => {
    const res = await api('GET', billingPath(org.organisationId, '/ledger'), { token: admin.token });
    expect(res.body.items).toEqual([
      expect.objectContaining({
        kind: 'grant',
        credits: 500,
        units: 30_000,
        source: expect.stringMatching(/^grant:period:/),
      }),
    ]);
    expect(res.body.next_cursor).toBeNull();
  });
});

describe('tenant isolation and roles', () => {
  test.each([...READS, ...WRITES])(
    '%s billing%s: another tenant, a non-member, an unknown or malformed id → 404',
    async (method, rest, body) => {
      const before = await snapshot(org);
      for (const token of [other.owner.token, stranger.token]) {
        const res = await api(method, billingPath(org.organisationId, rest), { token, body });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'Organisation not found' });
      }
      for (const id of [UNKNOWN.organisation, 'not-an-id', other.organisationId.toLowerCase()]) {
        const res = await api(method, billingPath(id, rest), { token: org.owner.token, body });
        expect(res.status).toBe(404);
      }
      expect(await snapshot(org)).toEqual(before);
    },
  );

  test.each(WRITES)(
    '%s billing%s: admin and regular members are refused (403); nothing changes',
    async (method, rest, body) => {
      const before = await snapshot(org);
      for (const who of [admin, regular]) {
        const res = await api(method, billingPath(org.organisationId, rest), { token: who.token, body });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          error: 'Only the organisation owner can manage billing (plan, subscription, credits)',
        });
      }
      expect(await snapshot(org)).toEqual(before);
    },
  );

  test.each([...READS, ...WRITES])(
    '%s billing%s: an API key is refused (403), no credential is 401',
    async (method, rest, body) => {
      expect((await api(method, billingPath(org.organisationId, rest), { token: apiKey, body })).status).toBe(
        403,
      );
      expect((await api(method, billingPath(org.organisationId, rest), { body })).status).toBe(401);
    },
  );
});

describe('bad input is 422 and changes nothing', () => {
  test.each([
    ['/subscription', { plan: 'free' }, 'enum'],
    ['/subscription', { plan: 'gold' }, 'enum'],
    ['/subscription', {}, 'missing'],
    ['/subscription', { plan: 'growth', credits: 100 }, 'extra_forbidden'],
    ['/subscription', { plan: 'growth', return_url: 'ftp://example.com' }, 'value_error'],
    ['/subscription', ['growth'], 'model_attributes_type'],
    ['/credits', { quantity: 99 }, 'greater_than_equal'],
    ['/credits', { quantity: 1_000_001 }, 'less_than_equal'],
    ['/credits', { quantity: 150.5 }, 'int_type'],
    ['/credits', { quantity: '500' }, 'float_type'],
    ['/credits', {}, 'missing'],
    ['/portal-session', { url: 'https://example.com' }, 'extra_forbidden'],
  ])('POST billing%s %j → %s', async (rest, body, type) => {
    const before = await snapshot(org);
    const res = await api('POST', billingPath(org.organisationId, rest), { token: org.owner.token, body });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type, loc: expect.arrayContaining(['body']) });
    expect(await snapshot(org)).toEqual(before);
  });

  test('a body that is not JSON is 422 json_invalid', async () => {
    const res = await api('POST', billingPath(org.organisationId, '/credits'), {
      token: org.owner.token,
      rawBody: '{"quantity": 500',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].type).toBe('json_invalid');
  });

  test.each([
    ['?limit=0'],
    ['?limit=101'],
    ['?limit=ten'],
    ['?cursor=not-a-cursor'],
    ['?cursor=bGVkXzAx'],
    ['?sort=asc'],
  ])('GET billing/ledger%s → 422', async (query) => {
    const res = await api('GET', billingPath(org.organisationId, `/ledger${query}`), {
      token: org.owner.token,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc[0]).toBe('query');
  });

  test('cancelling without a subscription is 409', async () => {
    const res = await api('DELETE', billingPath(org.organisationId, '/subscription'), {
      token: org.owner.token,
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'No active subscription' });
  });
});

describe('the ledger, a page at a time', () => {
  test('pages walk every movement newest first, each once, only this organisation’s', async () => {
    for (let i = 0; i < 5; i += 1) {
      await chargeSms({
        organisationId: org.organisationId,
        smsId: `sms-page-${i}-${org.organisationId}`,
        text: `Reply number ${i}`,
      });
    }
    await chargeSms({
      organisationId: other.organisationId,
      smsId: `sms-other-${other.organisationId}`,
      text: 'Other tenant',
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const res = await api('GET', billingPath(org.organisationId, `/ledger${query}`), {
        token: regular.token,
      });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((item: { id: string }) => item.id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(6);
    expect([...seen].sort().reverse()).toEqual(seen);
    const all = await fullLedger(org.organisationId, org.owner.token);
    expect(all.map((item) => item.id)).toEqual(seen);
    expect(
      all
        .slice(0, 5)
        .every((item) => item.kind === 'charge' && item.usage_kind === 'sms' && item.credits === -5),
    ).toBe(true);

    // Another tenant's entry made into a cursor is refused: cursors are sealed (opaque), none can be forged.
    const theirs = await fullLedger(other.organisationId, other.owner.token);
    const foreign = Buffer.from(theirs[0].id).toString('base64url');
    const res = await api('GET', billingPath(org.organisationId, `/ledger?cursor=${foreign}`), {
      token: org.owner.token,
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).not.toContain(theirs[0].id);
  });
});

describe('GET /api/v1/payment/pricing-model (public)', () => {
  test('plans, prices and the metering rules the meter charges with', async () => {
    const res = await api('GET', '/api/v1/payment/pricing-model');
    expect(res.status).toBe(200);
    const model = res.body;
    expect(model.currency).toBe('AUD');
    expect(model.extra_credits.price_aud).toBe(0.01);
    expect(model.extra_phone_number.price_aud_per_month).toBe(10);
    expect(model.plans.find((p: { id: string }) => p.id === 'free')).toMatchObject({
      included_credits: 500,
      agents_turn_off_when_credits_run_out: true,
    });
    expect(model.plans.find((p: { monthly_price_aud: number }) => p.monthly_price_aud === 500)).toMatchObject(
      { included_credits: 64_000 },
    );
    expect(model.free_of_charge).toEqual([
      'recordings',
      'transcripts',
      'contact creation',
      'contact updates',
    ]);
    for (const rule of model.metering_rules) {
      const meter = METERING_RULES[rule.kind as keyof typeof METERING_RULES];
      expect(rule).toMatchObject({
        credits: meter.credits,
        per: meter.per,
        units_per_quantity: meter.unitsPerQuantity,
      });
    }
    // What the model says a minute costs is what the meter charges for one.
    const call = model.metering_rules.find((r: { kind: string }) => r.kind === 'call');
    expect(call).toMatchObject({ credits: 20, per: 'minute', billed_in: 'second' });
    expect((call.units_per_quantity * 60) / model.units_per_credit).toBe(
      callUnits(60) / model.units_per_credit,
    );
    expect(model.metering_rules.find((r: { kind: string }) => r.kind === 'sms')).toMatchObject({
      credits: 5,
      per: 'segment',
    });
    expect(model.metering_rules.find((r: { kind: string }) => r.kind === 'memories')).toMatchObject({
      credits: 5,
      per: 'minute',
    });
    expect(model.metering_rules.find((r: { kind: string }) => r.kind === 'evaluation')).toMatchObject({
      credits: 20,
      per: 'run',
    });
  });
});
