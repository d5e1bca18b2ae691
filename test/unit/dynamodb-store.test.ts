import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { processStreamInOrder } from '../../lib/adapters/stream-records';
import { ConditionFailedError, WriteConflictError } from '../../lib/store/port';

const ddb = mockClient(DynamoDBDocumentClient);
const store = () => new DynamoDbStore(new DynamoDBClient({ region: 'eu-west-1' }), 'T');
beforeEach(() => ddb.reset());

describe('DynamoDbStore', () => {
  test('a single conditional write uses PutItem and maps a failed condition', async () => {
    ddb.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }));
    const err = await store()
      .write([{ type: 'put', item: { PK: 'a', SK: 'b' }, condition: 'not_exists' }])
      .catch((e) => e);
    expect(err).toBeInstanceOf(ConditionFailedError);
    expect(err.failedIndexes).toEqual([0]);
    expect(ddb.commandCalls(PutCommand)[0]!.args[0].input.ConditionExpression).toBe('attribute_not_exists(PK)');
  });

  test('several writes are one transaction; cancellation reasons name the failed operations', async () => {
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
      }),
    );
    const err = await store()
      .write([
        { type: 'check', key: { PK: 'w', SK: 'WALLET' }, condition: 'exists' },
        { type: 'put', item: { PK: 'w', SK: 'KEY#1' }, condition: 'not_exists' },
        { type: 'put', item: { PK: 'w', SK: 'KEYNAME#x' }, condition: 'not_exists' },
      ])
      .catch((e) => e);
    expect(err).toBeInstanceOf(ConditionFailedError);
    expect(err.failedIndexes).toEqual([2]);
    const items = ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items[0]!.ConditionCheck?.ConditionExpression).toBe('attribute_exists(PK)');
  });

  test('throttling and other cancellations surface as they are (a 500 to the caller); a lost race is a WriteConflictError', async () => {
    ddb.on(PutCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    await expect(store().write([{ type: 'put', item: { PK: 'a', SK: 'b' } }])).rejects.toBeInstanceOf(ProvisionedThroughputExceededException);
    const two = [
      { type: 'put', item: { PK: 'a', SK: 'b' } },
      { type: 'put', item: { PK: 'a', SK: 'c' } },
    ] as const;
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({ message: 'conflict', $metadata: {}, CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }] }),
    );
    await expect(store().write(two)).rejects.toBeInstanceOf(WriteConflictError);
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({ message: 'throttled', $metadata: {}, CancellationReasons: [{ Code: 'ThrottlingError' }, { Code: 'None' }] }),
    );
    await expect(store().write(two)).rejects.toBeInstanceOf(TransactionCanceledException);
  });

  test('query follows pages up to the limit, and index queries are eventually consistent', async () => {
    ddb
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ PK: 'p', SK: '1' }], LastEvaluatedKey: { PK: 'p', SK: '1' } })
      .resolvesOnce({ Items: [{ PK: 'p', SK: '2' }] });
    const items = await store().query('p', { index: 'GSI1' });
    expect(items.map((i) => i.SK)).toEqual(['1', '2']);
    const first = ddb.commandCalls(QueryCommand)[0]!.args[0].input;
    expect(first).toMatchObject({ IndexName: 'GSI1', ConsistentRead: false, ExpressionAttributeNames: { '#pk': 'GSI1PK' } });
  });

  test('update builds SET and REMOVE with placeholders only', async () => {
    ddb.on(UpdateCommand).resolves({});
    await store().write([{ type: 'update', key: { PK: 'a', SK: 'b' }, set: { status: 'revoked' }, remove: ['ttl'], condition: 'exists' }]);
    const input = ddb.commandCalls(UpdateCommand)[0]!.args[0].input;
    expect(input.UpdateExpression).toBe('SET #s0 = :s0 REMOVE #r0');
    expect(input.ExpressionAttributeNames).toEqual({ '#s0': 'status', '#r0': 'ttl' });
  });

  test('increment returns the new counter value', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { value: 7 } });
    expect(await store().increment({ PK: 'c', SK: 'c' }, 'value')).toBe(7);
  });

  test('getMany reads in one batch, in the keys\' order, and asks again for keys DynamoDB left unprocessed', async () => {
    ddb
      .on(BatchGetCommand)
      .resolvesOnce({ Responses: { T: [{ PK: 'w', SK: 'b', v: 2 }] }, UnprocessedKeys: { T: { Keys: [{ PK: 'w', SK: 'a' }] } } })
      .resolvesOnce({ Responses: { T: [{ PK: 'w', SK: 'a', v: 1 }] } });
    const got = await store().getMany([{ PK: 'w', SK: 'a' }, { PK: 'w', SK: 'b' }, { PK: 'w', SK: 'c' }]);
    expect(got).toEqual([{ PK: 'w', SK: 'a', v: 1 }, { PK: 'w', SK: 'b', v: 2 }, undefined]);
    const calls = ddb.commandCalls(BatchGetCommand).map((c) => c.args[0].input.RequestItems!.T!);
    expect(calls.map((c) => [c.Keys, c.ConsistentRead])).toEqual([
      [[{ PK: 'w', SK: 'a' }, { PK: 'w', SK: 'b' }, { PK: 'w', SK: 'c' }], true],
      [[{ PK: 'w', SK: 'a' }], true],
    ]);
  });

  test('a single write or increment that meets a transaction on its item is a WriteConflictError (retried by callers)', async () => {
    ddb.on(UpdateCommand).rejects(new TransactionConflictException({ message: 'conflict', $metadata: {} }));
    await expect(store().write([{ type: 'update', key: { PK: 'w', SK: 'x' }, set: { a: 1 } }])).rejects.toBeInstanceOf(WriteConflictError);
    await expect(store().increment({ PK: 'w', SK: 'x' }, 'n')).rejects.toBeInstanceOf(WriteConflictError);
  });

  test('a conditional increment maps a failed condition and creates nothing', async () => {
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }));
    await expect(store().increment({ PK: 'w', SK: 'x' }, 'n', { equals: { state: 'offer' } })).rejects.toBeInstanceOf(ConditionFailedError);
    expect(ddb.commandCalls(UpdateCommand)[0]!.args[0].input.ConditionExpression).toBe('attribute_exists(PK) AND #c0 = :c0');
  });

  test('an equals condition on an update merges its names and values with the update expression', async () => {
    ddb.on(UpdateCommand).resolves({});
    await store().write([{ type: 'update', key: { PK: 'w', SK: 'DLV#1' }, set: { status: 'retrying' }, remove: ['x'], condition: { equals: { attempt_count: 2 } } }]);
    const input = ddb.commandCalls(UpdateCommand)[0]!.args[0].input;
    expect(input.UpdateExpression).toBe('SET #s0 = :s0 REMOVE #r0');
    expect(input.ConditionExpression).toBe('attribute_exists(PK) AND #c0 = :c0');
    expect(input.ExpressionAttributeNames).toEqual({ '#s0': 'status', '#r0': 'x', '#c0': 'attempt_count' });
    expect(input.ExpressionAttributeValues).toEqual({ ':s0': 'retrying', ':c0': 2 });
  });

  test('a descending query asks DynamoDB for newest-first order', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await store().query('W#1', { skBeginsWith: 'DLV#', descending: true, limit: 5 });
    expect(ddb.commandCalls(QueryCommand)[0]!.args[0].input).toMatchObject({ ScanIndexForward: false, Limit: 5 });
  });
});

describe('processStreamInOrder', () => {
  const records = ['1', '2', '3'].map((n) => ({ dynamodb: { SequenceNumber: n } }));

  test('stops at the first failed record and reports only it, so Lambda retries from there', async () => {
    const ran: string[] = [];
    const failed: string[] = [];
    const res = await processStreamInOrder(
      records,
      async (r) => {
        ran.push(r.dynamodb!.SequenceNumber!);
        if (r.dynamodb!.SequenceNumber === '2') throw new Error('throttled');
      },
      (r) => failed.push(r.dynamodb!.SequenceNumber!),
    );
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }] });
    expect(ran).toEqual(['1', '2']); // record 3 waits for the retry
    expect(failed).toEqual(['2']);
  });

  test('a clean batch reports no failures', async () => {
    await expect(processStreamInOrder(records, async () => undefined, () => undefined)).resolves.toEqual({ batchItemFailures: [] });
  });
});
