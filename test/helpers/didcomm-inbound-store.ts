import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalRuntime } from '../../infra/local/runtime';

/** The envelopes for `recipient` the DIDComm endpoint stored in a wallet's partition and the worker has not handled yet. */
export async function storedEnvelopes(rt: Pick<LocalRuntime, 'endpoints' | 'tableName'>, walletId: number, recipient: string): Promise<number> {
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: rt.endpoints.dynamodb }));
  try {
    const out = await ddb.send(new QueryCommand({ TableName: rt.tableName, KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)', ExpressionAttributeValues: { ':pk': `W#${walletId}`, ':sk': 'DCIN#' }, ConsistentRead: true }));
    return (out.Items ?? []).filter((i) => i.recipient === recipient).length;
  } finally {
    ddb.destroy();
  }
}
