/**
 * The local runtime's pollers idle without busy polling: after a quiet spell a poller pauses long,
 * activity cuts that pause short (never to less than its first pause), a busy API adds no polls, and
 * stopping ends a pause.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { pollQueue, pollStream, Wakeup } from '../../infra/local/pollers';

describe('Wakeup', () => {
  test('sleeps the whole pause when nothing happens', async () => {
    const t0 = Date.now();
    expect(await new Wakeup().sleep(200, 20)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  test('a wake cuts the pause short, but not below soonMs from the start', async () => {
    const w = new Wakeup();
    const t0 = Date.now();
    const slept = w.sleep(5000, 60);
    setTimeout(() => w.wake(), 5);
    expect(await slept).toBe(true);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(55);
    expect(took).toBeLessThan(1000);
  });

  test('a wake after soonMs ends the pause at once; abort ends it too', async () => {
    const w = new Wakeup();
    const t0 = Date.now();
    const slept = w.sleep(5000, 10);
    setTimeout(() => w.wake(), 80);
    expect(await slept).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    const abort = new AbortController();
    const t1 = Date.now();
    const aborted = w.sleep(5000, 10, abort.signal);
    setTimeout(() => abort.abort(), 20);
    expect(await aborted).toBe(false);
    expect(Date.now() - t1).toBeLessThan(1000);
  });
});

describe('pollQueue', () => {
  test('empty: short polls with the busy pauses, then the idle pause; activity cuts only the idle pause short and busy wakes add no polls; work is taken in batches; stop ends a pause', async () => {
    const receives: number[] = [];
    const queue: { MessageId: string; ReceiptHandle: string; Body: string }[] = [];
    const deleted: string[] = [];
    const sqs = {
      send: async (cmd: { input: Record<string, any>; constructor: { name: string } }) => {
        if (cmd.constructor.name === 'DeleteMessageBatchCommand') {
          deleted.push(...cmd.input.Entries.map((e: { ReceiptHandle: string }) => e.ReceiptHandle));
          return {};
        }
        expect(cmd.input.WaitTimeSeconds).toBe(0);
        receives.push(Date.now());
        return { Messages: queue.splice(0, cmd.input.MaxNumberOfMessages) };
      },
    } as unknown as SQSClient;
    const batches: number[] = [];
    const activity = new Wakeup();
    const errors: unknown[] = [];
    const t0 = Date.now();
    const poller = pollQueue({
      sqs,
      queueUrl: 'q',
      queueArn: 'arn:q',
      functionName: 'w',
      worker: async (event) => {
        batches.push(event.Records.length);
        return { batchItemFailures: [] };
      },
      batchSize: 10,
      concurrency: 1,
      onError: (e) => errors.push(e),
      activity,
      pauses: { first: 20, max: 40, idle: 60_000, quietAfter: 250 },
    });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Busy pauses (20, 40, 40, ...) for 250 ms: several polls; then idle: none for a long while.
    await sleep(600);
    expect(receives.filter((t) => t - t0 < 300).length).toBeGreaterThanOrEqual(2);
    const idleSince = receives.length;
    await sleep(500);
    expect(receives.length).toBe(idleSince);

    // Activity ends the idle pause (not before `first` after it began); then busy pauses again.
    const woke = Date.now();
    activity.wake();
    await sleep(35);
    expect(receives.length).toBeGreaterThan(idleSince);
    expect(receives[idleSince]! - woke).toBeLessThan(200);
    // A busy API: wakes every millisecond add no polls beyond the busy pauses' (at most 20, 40, 40, 40, 40 in 200 ms;
    // cut short to `first` by each wake they would be 10).
    const before = receives.length;
    const spam = setInterval(() => activity.wake(), 1);
    await sleep(200);
    clearInterval(spam);
    expect(receives.length - before).toBeLessThanOrEqual(7);

    // Work: taken in batches of 10 (next poll within the busy pause).
    for (let i = 0; i < 12; i++) queue.push({ MessageId: `m${i}`, ReceiptHandle: `r${i}`, Body: '{}' });
    for (let i = 0; i < 50 && deleted.length < 12; i++) await sleep(20);
    expect(batches).toEqual([10, 2]);
    expect(deleted).toHaveLength(12);

    // Quiet again, in the idle pause: stop ends it at once.
    await sleep(400);
    const t1 = Date.now();
    await poller.stop();
    expect(Date.now() - t1).toBeLessThan(500);
    expect(errors).toEqual([]);
  });
});

describe('arrivals', () => {
  test('a sticky wake with nobody asleep ends the next sleep at once; a plain one is lost', async () => {
    const sticky = new Wakeup({ sticky: true });
    sticky.wake();
    const t0 = Date.now();
    expect(await sticky.sleep(5000, 0)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    // Used up: the sleep after it is whole again.
    expect(await sticky.sleep(50, 0)).toBe(false);
    const plain = new Wakeup();
    plain.wake();
    expect(await plain.sleep(50, 0)).toBe(false);
  });

  test('a message sent to the emulator is reported by its queue name and ends its poller\'s pause at once; a delayed one when its delay is over', async () => {
    const { CreateQueueCommand, SendMessageCommand, SendMessageBatchCommand, SQSClient: Client } = await import('@aws-sdk/client-sqs');
    const { startSqs } = await import('../../infra/local/emulators');
    const reported: string[] = [];
    const arrivals = new Wakeup({ sticky: true });
    const sqsEmulator = await startSqs((name) => {
      reported.push(name);
      if (name === 'arrivals-test') arrivals.wake();
    });
    const sqs = new Client({ endpoint: sqsEmulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const received: number[] = [];
    let poller: { stop(): Promise<void> } | undefined;
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'arrivals-test' }));
      poller = pollQueue({
        sqs,
        queueUrl: QueueUrl!,
        queueArn: 'arn:arrivals-test',
        functionName: 'w',
        worker: async (event) => {
          received.push(Date.now());
          expect(event.Records).toHaveLength(1);
          return { batchItemFailures: [] };
        },
        batchSize: 10,
        concurrency: 1,
        onError: (e) => {
          throw e;
        },
        arrivals,
        // Pauses far longer than the test: only an arrival can make the poller receive again.
        pauses: { first: 30_000, max: 30_000, idle: 60_000, quietAfter: 60_000 },
      });
      await new Promise((r) => setTimeout(r, 200)); // its first receive was empty: it is in its pause
      await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: 'a', MessageBody: 'later', DelaySeconds: 2 }] }));
      expect(reported).toEqual([]);
      const sent = Date.now();
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'now' }));
      for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(reported).toEqual(['arrivals-test']);
      expect(received).toHaveLength(1);
      expect(received[0]! - sent).toBeLessThan(1500);
      // The delayed one: reported once its 2 s are over, and taken then (not at the end of the 30 s pause).
      for (let i = 0; i < 200 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(reported).toEqual(['arrivals-test', 'arrivals-test']);
      expect(received).toHaveLength(2);
      expect(received[1]! - sent).toBeGreaterThanOrEqual(1500);
      expect(received[1]! - sent).toBeLessThan(3500);
    } finally {
      await poller?.stop();
      sqs.destroy();
      await sqsEmulator.stop();
    }
  });

  test('a message the worker failed is taken again when its visibility timeout runs out, not at the end of the idle pause', async () => {
    const { CreateQueueCommand, SendMessageCommand, SQSClient: Client } = await import('@aws-sdk/client-sqs');
    const { startSqs } = await import('../../infra/local/emulators');
    const arrivals = new Wakeup({ sticky: true });
    const sqsEmulator = await startSqs((name) => {
      if (name === 'visibility-test') arrivals.wake();
    });
    const sqs = new Client({ endpoint: sqsEmulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const received: number[] = [];
    let poller: { stop(): Promise<void> } | undefined;
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'visibility-test', Attributes: { VisibilityTimeout: '1' } }));
      poller = pollQueue({
        sqs,
        queueUrl: QueueUrl!,
        queueArn: 'arn:visibility-test',
        functionName: 'w',
        // Fails the message the first time, takes it the second.
        worker: async (event) => {
          received.push(Date.now());
          return { batchItemFailures: received.length === 1 ? event.Records.map((r) => ({ itemIdentifier: r.messageId })) : [] };
        },
        batchSize: 10,
        concurrency: 1,
        onError: (e) => {
          throw e;
        },
        arrivals,
        visibilityTimeoutSeconds: 1,
        // Pauses far longer than the test: only the visibility wake can make the poller receive again.
        pauses: { first: 30_000, max: 30_000, idle: 60_000, quietAfter: 60_000 },
      });
      await new Promise((r) => setTimeout(r, 200));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'fails once' }));
      for (let i = 0; i < 200 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(2);
      expect(received[1]! - received[0]!).toBeGreaterThanOrEqual(900);
      expect(received[1]! - received[0]!).toBeLessThan(3000);
    } finally {
      await poller?.stop();
      sqs.destroy();
      await sqsEmulator.stop();
    }
  });
});

describe('pollStream', () => {
  /** A stream of one open shard whose records the test appends; each read takes up to Limit of them. */
  function fakeStream() {
    const records: unknown[] = [];
    let read = 0;
    const reads: { at: number; got: number }[] = [];
    const streams = {
      send: async (cmd: { input: Record<string, any>; constructor: { name: string } }) => {
        switch (cmd.constructor.name) {
          case 'DescribeStreamCommand':
            return { StreamDescription: { Shards: [{ ShardId: 's1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } };
          case 'GetShardIteratorCommand':
            return { ShardIterator: 'it' };
          case 'GetRecordsCommand': {
            const got = records.slice(read, read + cmd.input.Limit);
            read += got.length;
            reads.push({ at: Date.now(), got: got.length });
            return { Records: got, NextShardIterator: 'it' };
          }
        }
        throw new Error(`unexpected ${cmd.constructor.name}`);
      },
    } as unknown as DynamoDBStreamsClient;
    const outbox = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ eventID: String(i), eventName: 'INSERT', dynamodb: { Keys: {}, NewImage: { PK: { S: 'W#1' }, SK: { S: `EVT#${i}` } }, SequenceNumber: String(i) } }));
    return { streams, reads, push: (n: number) => records.push(...outbox(n)) };
  }

  test('after a partial read it waits its batch pause, so records written meanwhile come in one read; after a full read it reads on at once; stop ends the pause', async () => {
    const s = fakeStream();
    const batches: number[] = [];
    const errors: unknown[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    s.push(250); // a backlog: two full reads, then a partial one
    const poller = pollStream({
      streams: s.streams,
      streamArn: 'arn:stream',
      functionName: 'relay',
      worker: async (event) => {
        batches.push(event.Records.length);
        // While the relay works on the partial read, three more records are written one by one.
        if (batches.length === 3) for (let i = 0; i < 3; i++) s.push(1);
        return { batchItemFailures: [] };
      },
      onError: (e) => errors.push(e),
      batchPauseMs: 300,
    });
    try {
      await sleep(150);
      // The backlog: 100, 100 at once, then 50; the three written meanwhile wait for the pause.
      expect(batches).toEqual([100, 100, 50]);
      expect(s.reads[1]!.at - s.reads[0]!.at).toBeLessThan(100);
      await sleep(300);
      expect(batches).toEqual([100, 100, 50, 3]); // one read for the three, not three reads
      expect(s.reads).toHaveLength(4);
      expect(s.reads[3]!.at - s.reads[2]!.at).toBeGreaterThanOrEqual(290);
    } finally {
      // Stopping during the batch pause after the read of three does not wait it out.
      const t = Date.now();
      await poller.stop();
      expect(Date.now() - t).toBeLessThan(150);
    }
    expect(errors).toEqual([]);
  });
});
