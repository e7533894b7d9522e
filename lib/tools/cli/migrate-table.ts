import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient, tableName } from '../../../functions/platform/table.js';

/** The table's item count (DynamoDB's estimate, refreshed about every 6 hours): the progress bar's total. */
export async function describeTable(): Promise<number> {
  const { Table } = await dynamoClient().send(new DescribeTableCommand({ TableName: tableName() }));
  return Table?.ItemCount ?? 0;
}
