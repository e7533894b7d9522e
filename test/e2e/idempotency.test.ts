import { describe, expect, it, beforeAll } from '@jest/globals';
import { api, type Json } from '../helpers/http.js';
import { addMember, newTenant, ws, type Tenant, type User } from './calling/fixtures.js';

/** `Idempotency-Key` on write routes (docs/api.md conventions), through the kernel, over HTTP. */
let tenant: Tenant;
let member: User;

beforeAll(async () => {
  tenant = await newTenant();
  member = await addMember(tenant, 'member');
});

const createAgent = (token: string, key: string | undefined, name: string) =>
  api('POST', `${ws(tenant)}/agents`, {
    token,
    headers: key === undefined ? {} : { 'idempotency-key': key },
    body: { name, prompt: 'You answer questions about opening hours.', greeting: 'Hello.' },
  });

const agentsNamed = async (name: string) => {
  const res = await api('GET', `${ws(tenant)}/agents?limit=100`, { token: tenant.owner.token });
  return (res.body.items as Json[]).filter((a) => a.name === name);
};

describe('Idempotency-Key on writes', () => {
  it('a retry with the same key and body answers the first response and creates nothing more', async () => {
    const first = await createAgent(tenant.owner.token, 'create-agent-1', 'Idem A');
    expect(first.status).toBe(201);
    const again = await createAgent(tenant.owner.token, 'create-agent-1', 'Idem A');
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await agentsNamed('Idem A')).toHaveLength(1);
  });

  it('the same key with another body is 409 and changes nothing', async () => {
    await createAgent(tenant.owner.token, 'create-agent-2', 'Idem B');
    const other = await createAgent(tenant.owner.token, 'create-agent-2', 'Idem B2');
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: 'Idempotency-Key was already used with a different request' });
    expect(await agentsNamed('Idem B2')).toHaveLength(0);
  });

  it('concurrent requests with one key create one agent', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => createAgent(tenant.owner.token, 'create-agent-3', 'Idem C')),
    );
    for (const answer of answers) expect([201, 409]).toContain(answer.status);
    expect(await agentsNamed('Idem C')).toHaveLength(1);
  });

  it('keys belong to their caller: another member with the same key gets their own result', async () => {
    const mine = await createAgent(tenant.owner.token, 'shared-key', 'Idem D');
    const theirs = await createAgent(member.token, 'shared-key', 'Idem D');
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('a refused request gives its key back, and a malformed key is 422', async () => {
    const refused = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      headers: { 'idempotency-key': 'refused-1' },
      body: { name: 'x'.repeat(500), prompt: 'p', greeting: 'g', nonsense: true },
    });
    expect(refused.status).toBe(422);
    const fine = await createAgent(tenant.owner.token, 'refused-1', 'Idem E');
    expect(fine.status).toBe(201);
    const malformed = await createAgent(tenant.owner.token, 'x'.repeat(300), 'Idem F');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['header', 'idempotency-key']);
    expect(await agentsNamed('Idem F')).toHaveLength(0);
  });

  it('without the header every request is its own', async () => {
    await createAgent(tenant.owner.token, undefined, 'Idem G');
    await createAgent(tenant.owner.token, undefined, 'Idem G');
    expect(await agentsNamed('Idem G')).toHaveLength(2);
  });
});
