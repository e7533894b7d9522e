import fc from 'fast-check';
import { api, type Json } from '../../helpers/http.js';
import { apiKey, readyToCall, setConcurrencyLimit, TEST_NUMBERS, ws, type Tenant } from './fixtures.js';

/**
 * Property: whatever JSON a client sends to start-call, the answer is a 201 CallCreateResponse or a
 * documented 4xx shape — never a 500. Bodies are arbitrary JSON values, and objects mixing valid and
 * invalid values of every field the spec names, plus unknown ones.
 */

let tenant: Tenant;
let agentId: string;
let fromPhone: string;
let key: string;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id;
  fromPhone = ready.number.phone_number;
  await setConcurrencyLimit(tenant.workspaceId, 1000);
  ({ key } = await apiKey(tenant));
});

const ERROR_STATUSES = new Set([402, 404, 409, 422, 429]);

function checkShape(status: number, body: Json, sent: unknown): void {
  expect(status).not.toBe(500);
  if (status === 201) {
    expect(body).toMatchObject({ agent_id: agentId, workspace_id: tenant.workspaceId, status: 'created' });
    expect(typeof body.to_phone).toBe('string');
    expect(typeof body.record).toBe('boolean');
    return;
  }
  expect(ERROR_STATUSES.has(status)).toBe(true);
  if (status === 422) {
    expect(Array.isArray(body.detail)).toBe(true);
    expect(body.detail.length).toBeGreaterThan(0);
    for (const entry of body.detail as Json[]) {
      expect(Object.keys(entry)).toEqual(expect.arrayContaining(['type', 'loc', 'msg', 'input']));
      expect(typeof entry.type).toBe('string');
      expect(typeof entry.msg).toBe('string');
      expect(entry.loc[0]).toBe('body');
      for (const part of entry.loc) expect(['string', 'number']).toContain(typeof part);
    }
  } else {
    expect(Object.keys(body)).toEqual(['error']);
    expect(typeof body.error).toBe('string');
  }
  void sent;
}

const phoneish = fc.oneof(
  fc.constantFrom(
    TEST_NUMBERS.answered,
    TEST_NUMBERS.busy,
    '+61491570157',
    '0491570156',
    '+1',
    '',
    '+61 491 570 156',
    '+999999999999999',
  ),
  fc.string({ maxLength: 20 }),
  fc.stringMatching(/^\+[1-9]\d{6,14}$/),
  fc.integer(),
  fc.constant(null),
);

const field = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const structured = fc
  .record({
    to_phone: field(phoneish),
    from_phone: field(fc.oneof(phoneish, fc.constant('__FROM__'))),
    record: field(fc.oneof(fc.boolean(), fc.constant(null), fc.string({ maxLength: 5 }), fc.integer())),
    parameters: field(
      fc.oneof(
        fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 5 }),
        fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    ),
    extra: field(
      fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
    ),
  })
  .map(({ extra, ...fields }) => {
    const body: Record<string, unknown> = { ...(extra ?? {}) };
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) body[name] = value === '__FROM__' ? fromPhone : value;
    }
    return body;
  });

describe('start-call never answers 500', () => {
  it('arbitrary JSON bodies (API key)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (body) => {
        const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, { token: key, body });
        checkShape(res.status, res.body, body);
      }),
      { numRuns: 60 },
    );
  });

  it('objects mixing valid and invalid start-call fields (JWT and API key)', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(structured, fc.boolean(), async (body, useKey) => {
        const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
          token: useKey ? key : tenant.owner.token,
          body,
        });
        checkShape(res.status, res.body, body);
        seen.add(res.status);
        if (res.status === 201) expect(res.body.to_phone).toBe(body.to_phone);
      }),
      {
        numRuns: 150,
        examples: [
          [{ to_phone: TEST_NUMBERS.answered }, true],
          [{ to_phone: TEST_NUMBERS.answered, from_phone: '+61255509999' }, false],
        ],
      },
    );
    // The generator reaches both sides of the contract.
    expect(seen.has(201)).toBe(true);
    expect(seen.has(422)).toBe(true);
    expect(seen.has(404)).toBe(true);
  });

  it('arbitrary bytes as the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
        const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
          token: key,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        checkShape(res.status, res.body, raw);
      }),
      { numRuns: 60 },
    );
  });
});
