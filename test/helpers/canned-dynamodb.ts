import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Readable } from 'node:stream';

/**
 * A real DynamoDB client whose transport answers every request from memory with `body` (JSON, as
 * DynamoDB's wire protocol would): the SDK's whole client-side work runs, no network.
 */
export function cannedDynamoDbClient(opts: object, body: string, statusCode = 200): DynamoDBClient {
  return new DynamoDBClient({
    ...opts,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    requestHandler: { handle: async () => ({ response: { statusCode, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(body)]) } }) } as never,
  });
}
