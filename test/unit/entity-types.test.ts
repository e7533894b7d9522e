import type { Entity, ResponseItem, Schema } from 'electrodb';
import * as access from '../../functions/access/entities.js';
import * as agents from '../../functions/agents/entities.js';
import * as billing from '../../functions/billing/entities.js';
import * as calling from '../../functions/calling/entities.js';
import * as contacts from '../../functions/contacts/entities.js';
import * as numbers from '../../functions/numbers/entities.js';
import * as auth from '../../functions/platform/auth/entities.js';
import * as idempotency from '../../functions/platform/idempotency.js';
import * as postCall from '../../functions/post-call/entities.js';
import * as webhookDeliveries from '../../functions/webhook-deliveries/entities.js';

/**
 * ElectroDB infers an entity's item, key and query types from its schema literal; the index helpers
 * (functions/platform/keys.ts) must keep that inference. This file is checked by the compiler: it
 * fails to compile (`npx tsc --noEmit -p .`, and ts-jest) if any entity's item is `any`, an untyped
 * record, or its keys are untyped.
 */
type IsAny<T> = 0 extends 1 & T ? true : false;
type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
/** An intersection or alias flattened into one object type, to compare it. */
type Flat<T> = { [K in keyof T]: T[K] };
/** `any`, or a record of any key (what a helper that widens the composites to `string[]` produces). */
type Untyped<T> = IsAny<T> extends true ? true : string extends keyof T ? true : false;

type ItemOf<E> =
  E extends Entity<infer A, infer F, infer C, infer S>
    ? S extends Schema<A, F, C>
      ? ResponseItem<A, F, C, S>
      : never
    : never;
/** The key that `get` takes (its single-item overload). */
type GetKeyOf<E> = E extends { get(key: infer K): unknown; get(keys: (infer _K)[]): unknown } ? K : never;

/** The names of a module's entities whose items or keys are untyped: `never` when all are typed. */
type UntypedEntities<M> = {
  [K in keyof M]: M[K] extends Entity<infer _A, infer _F, infer _C, infer _S>
    ? Untyped<ItemOf<M[K]>> extends true
      ? K
      : [GetKeyOf<M[K]>] extends [never]
        ? K
        : Untyped<GetKeyOf<M[K]>> extends true
          ? K
          : never
    : never;
}[keyof M];

/** Compiles only when `T` is `true`. */
const assert = <T extends true>(): T | undefined => undefined;

type Modules = [
  typeof access,
  typeof agents,
  typeof billing,
  typeof calling,
  typeof contacts,
  typeof numbers,
  typeof auth,
  typeof idempotency,
  typeof postCall,
  typeof webhookDeliveries,
];

describe('entity types (checked by the compiler)', () => {
  it('every entity item and key is typed', () => {
    assert<Equal<UntypedEntities<Modules[number]>, never>>();
    // Each module on its own, so an error names the module whose entity lost its types.
    assert<Equal<UntypedEntities<typeof access>, never>>();
    assert<Equal<UntypedEntities<typeof agents>, never>>();
    assert<Equal<UntypedEntities<typeof billing>, never>>();
    assert<Equal<UntypedEntities<typeof calling>, never>>();
    assert<Equal<UntypedEntities<typeof contacts>, never>>();
    assert<Equal<UntypedEntities<typeof numbers>, never>>();
    assert<Equal<UntypedEntities<typeof auth>, never>>();
    assert<Equal<UntypedEntities<typeof idempotency>, never>>();
    assert<Equal<UntypedEntities<typeof postCall>, never>>();
    assert<Equal<UntypedEntities<typeof webhookDeliveries>, never>>();
  });

  it('items and keys have the attributes’ own types', () => {
    type Agent = ItemOf<typeof agents.AgentEntity>;
    assert<Equal<Agent['workspaceId'], string>>();
    assert<Equal<Agent['settings']['speechSpeed'], 'slow' | 'medium' | 'fast'>>();
    type OpenCall = ItemOf<typeof calling.OpenCallEntity>;
    assert<Equal<OpenCall['shard'], number>>();
    assert<
      Equal<
        Flat<GetKeyOf<typeof calling.OpenCallEntity>>,
        { shard: number; createdAt: string; callId: string }
      >
    >();
    assert<
      Equal<Flat<GetKeyOf<typeof access.InvitationEntity>>, { organisationId: string; email: string }>
    >();
    assert<
      Equal<
        Flat<Parameters<typeof calling.CallEntity.query.byAgent>[0]>,
        { workspaceId: string; agentId: string; callShard: number; callId?: string }
      >
    >();
    assert<
      Equal<
        Flat<Parameters<typeof billing.BillingAccountEntity.query.byRenewal>[0]>,
        { renewalShard: string; periodEnd?: string; organisationId?: string }
      >
    >();
  });

  it('the checks themselves catch an untyped item', () => {
    assert<Untyped<Record<string, never>>>();
    // @ts-expect-error a typed item is not untyped
    assert<Untyped<{ a: string }>>();
    assert<Untyped<ReturnType<typeof JSON.parse>>>(); // `any`
  });
});
