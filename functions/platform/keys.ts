import { TABLE } from './resources.js';
import { KEEP_CASE } from './table.js';

/**
 * The indexes of an ElectroDB entity on the single table: the primary key and the overloaded GSIs of
 * `TABLE` (functions/platform/resources.ts), each key built from its composite attributes by a
 * template and kept in the case it was written in.
 *
 *   indexes: {
 *     byWorkspace: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['agentId'], 'AGENT#${agentId}'),
 *     byOrganisation: gsi1(['organisationId'], 'ORG#${organisationId}#AGENTS', ['agentId'], '${agentId}'),
 *   }
 *
 * The composites are `const` type parameters and every result is `as const`, so the index reaches
 * ElectroDB exactly as if written inline: the attribute names stay literal types and the entity's
 * items, keys and queries stay typed (test/unit/entity-types.test.ts fails to compile otherwise). A
 * helper returning `composite: string[]` or `field: string` would make every item an untyped record.
 * ElectroDB checks at construction that a template names exactly its composite attributes.
 */
type Composite = readonly string[];

const key = <const Field extends string, const C extends Composite>(
  field: Field,
  composite: C,
  template: string,
) => ({ field, composite, template, casing: KEEP_CASE }) as const;

/** The table's own key: `pk` and `sk`. */
export const primaryIndex = <const PK extends Composite, const SK extends Composite>(
  pk: PK,
  pkTemplate: string,
  sk: SK,
  skTemplate: string,
) => ({ pk: key(TABLE.partitionKey, pk, pkTemplate), sk: key(TABLE.sortKey, sk, skTemplate) }) as const;

const secondaryIndex =
  <const I extends (typeof TABLE.indexes)[number]>(index: I) =>
  <const PK extends Composite, const SK extends Composite>(
    pk: PK,
    pkTemplate: string,
    sk: SK,
    skTemplate: string,
  ) =>
    ({
      index: index.name,
      pk: key(index.partitionKey, pk, pkTemplate),
      sk: key(index.sortKey, sk, skTemplate),
    }) as const;

/** The first overloaded GSI: `gsi1pk` and `gsi1sk`. */
export const gsi1 = secondaryIndex(TABLE.indexes[0]);
/** The second overloaded GSI: `gsi2pk` and `gsi2sk`. */
export const gsi2 = secondaryIndex(TABLE.indexes[1]);
