import { DescribeStreamCommand, GetRecordsCommand, GetShardIteratorCommand, type DynamoDBStreamsClient, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { pollStream, Wakeup } from '../../infra/local/pollers';
import { OUTBOX_SK_PREFIX } from '../../lib/service/resources';

/** An outbox insert as DynamoDB Streams reports it, with its sequence number. */
const record = (seq: number): _Record => ({
  eventID: `e${seq}`,
  eventName: 'INSERT',
  dynamodb: { SequenceNumber: String(seq), Keys: { PK: { S: 'W#1' }, SK: { S: `${OUTBOX_SK_PREFIX}${seq}` } }, NewImage: { PK: { S: 'W#1' }, SK: { S: `${OUTBOX_SK_PREFIX}${seq}` } } },
});

const gone = (name: string) => Object.assign(new Error(name), { name });

/**
 * A one-shard stream of records 1…5 whose iterators are `at:<seq>` (the next record to read). Iterators
 * named in `failures` fail once with the given error, as DynamoDB Local's do when its records were
 * trimmed or the iterator expired.
 */
function fakeStream(failures: Record<string, string>, trimmedOnFailure: number) {
  const iteratorRequests: string[] = [];
  let trimmedUpTo = 0;
  const client = {
    async send(cmd: unknown) {
      if (cmd instanceof DescribeStreamCommand) return { StreamDescription: { Shards: [{ ShardId: 's1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } };
      if (cmd instanceof GetShardIteratorCommand) {
        const i = cmd.input;
        iteratorRequests.push(`${i.ShardIteratorType}${i.SequenceNumber ? `:${i.SequenceNumber}` : ''}`);
        const from = i.ShardIteratorType === 'TRIM_HORIZON' ? trimmedUpTo + 1 : i.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' ? Number(i.SequenceNumber) + 1 : Number(i.SequenceNumber);
        return { ShardIterator: `at:${from}` };
      }
      if (cmd instanceof GetRecordsCommand) {
        const it = cmd.input.ShardIterator!;
        const failure = failures[it];
        if (failure) {
          delete failures[it];
          if (failure === 'TrimmedDataAccessException') trimmedUpTo = trimmedOnFailure;
          throw gone(failure);
        }
        const from = Number(it.slice(3));
        // Two records a read, so a read ends between records.
        const records = [from, from + 1].filter((n) => n <= 5).map(record);
        return { Records: records, NextShardIterator: `at:${from + records.length}` };
      }
      throw new Error(`unexpected ${String(cmd)}`);
    },
  };
  return { client: client as unknown as DynamoDBStreamsClient, iteratorRequests };
}

async function run(failures: Record<string, string>, expected: number, trimmedOnFailure = 0) {
  const stream = fakeStream(failures, trimmedOnFailure);
  const seen: number[] = [];
  const errors: unknown[] = [];
  const poller = pollStream({
    streams: stream.client,
    streamArn: 'arn:stream',
    functionName: 'webhook-relay',
    activity: new Wakeup(),
    onError: (err) => errors.push(err),
    worker: async (event: DynamoDBStreamEvent) => {
      for (const r of event.Records) seen.push(Number(r.dynamodb!.SequenceNumber));
      return { batchItemFailures: [] };
    },
  });
  const until = Date.now() + 5000;
  while (seen.length < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 300)); // what it would read more, it reads now
  await poller.stop();
  return { seen, errors, iteratorRequests: stream.iteratorRequests };
}

describe('the local stream poller when its iterator is gone', () => {
  test('an expired iterator resumes after the last record read: nothing skipped, nothing read twice, no error', async () => {
    const out = await run({ 'at:3': 'ExpiredIteratorException' }, 5);
    expect(out.seen).toEqual([1, 2, 3, 4, 5]);
    expect(out.iteratorRequests).toEqual(['TRIM_HORIZON', 'AFTER_SEQUENCE_NUMBER:2']);
    expect(out.errors).toEqual([]);
  });

  test('an iterator that expires before any record was read starts again from the oldest record: nothing skipped', async () => {
    const out = await run({ 'at:1': 'ExpiredIteratorException' }, 5);
    expect(out.seen).toEqual([1, 2, 3, 4, 5]);
    expect(out.iteratorRequests).toEqual(['TRIM_HORIZON', 'TRIM_HORIZON']);
    expect(out.errors).toEqual([]);
  });

  test('records trimmed from under the iterator: reading goes on from the oldest record left', async () => {
    // Records 1–3 trimmed after the first read: 3 is gone from the stream (as in AWS), 4 and 5 are
    // still relayed, and the poller does not stay stuck on the dead iterator.
    const out = await run({ 'at:3': 'TrimmedDataAccessException' }, 4, 3);
    expect(out.seen).toEqual([1, 2, 4, 5]);
    expect(out.iteratorRequests).toEqual(['TRIM_HORIZON', 'TRIM_HORIZON']);
    expect(out.errors).toEqual([]);
  });

  test('any other error is reported and the read retried with the same iterator', async () => {
    const out = await run({ 'at:3': 'InternalServerError' }, 5);
    expect(out.seen).toEqual([1, 2, 3, 4, 5]);
    expect(out.errors.map((e) => (e as Error).name)).toEqual(['InternalServerError']);
    expect(out.iteratorRequests).toEqual(['TRIM_HORIZON']);
  });
});
