import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { CALLS_MIGRATED_KEY, forgetMigrationMark } from '../../functions/platform/key-moves.js';
import { docClient, tableName } from '../../functions/platform/table.js';

/**
 * The table as deployed before `migrate calls` has run (no migration mark: the old keys are read),
 * for tests of the old layout against the shared DynamoDB Local.
 */

/** Removes the migration's mark (and this process's cached reading of it). */
export async function dropMigrationMark(): Promise<void> {
  await docClient().send(new DeleteCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }));
  forgetMigrationMark();
}

/** In the enclosing file or describe: the mark dropped before its tests and put back as it was after. */
export function beforeMigration(): void {
  let mark: Record<string, unknown> | undefined;
  beforeAll(async () => {
    mark = (await docClient().send(new GetCommand({ TableName: tableName(), Key: CALLS_MIGRATED_KEY }))).Item;
    await dropMigrationMark();
  });
  afterAll(async () => {
    if (mark) await docClient().send(new PutCommand({ TableName: tableName(), Item: mark }));
    forgetMigrationMark();
  });
}
