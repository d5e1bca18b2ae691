import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type ShardIteratorType, type _Record } from '@aws-sdk/client-dynamodb-streams';
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { matchesOutboxFilter } from '../../lib/service/resources';
import { lambdaContext } from './lambda-context';

export interface Poller {
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sleeps `ms`, or until `signal` aborts (a stopping poller does not wait out its pause). */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Activity in the runtime (an API response, a worker invocation): pollers sleeping on an empty stream
 * look again soon instead of at the end of their backoff, so an idle runtime can poll rarely without
 * making the first event after a quiet spell wait. A wake never brings a poll closer than `soonMs`
 * after its sleep began, so that many wakes (a busy API) do not turn into many polls.
 */
export class Wakeup {
  readonly #sleepers = new Set<() => void>();
  #pending = false;

  /**
   * `sticky`: a wake while nobody sleeps is kept for the next sleep, which then ends at once (after
   * `soonMs`): a message that arrives while its poller's receive is under way is not left for a pause.
   */
  constructor(private readonly opts: { sticky?: boolean } = {}) {}

  wake(): void {
    if (this.opts.sticky && this.#sleepers.size === 0) this.#pending = true;
    for (const w of [...this.#sleepers]) w();
  }

  /** Sleeps `ms`, or until `soonMs` after the start if woken meanwhile (true), or until aborted. */
  sleep(ms: number, soonMs: number, signal?: AbortSignal): Promise<boolean> {
    const start = Date.now();
    const pending = this.#pending;
    this.#pending = false;
    return new Promise((resolve) => {
      let timer = setTimeout(() => done(false), ms);
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.#sleepers.delete(onWake);
        signal?.removeEventListener('abort', onAbort);
        resolve(woken);
      };
      const onAbort = () => done(false);
      signal?.addEventListener('abort', onAbort);
      const onWake = () => {
        this.#sleepers.delete(onWake);
        clearTimeout(timer);
        timer = setTimeout(() => done(true), Math.max(0, start + soonMs - Date.now()));
      };
      this.#sleepers.add(onWake);
      if (pending) onWake();
    });
  }
}

/**
 * A poller's pause after an empty read. For `quietAfter` ms after the last message or activity it is
 * what it always was — a queue 50 ms doubling to 500 ms, the stream 100 ms — so work that follows
 * activity (a status list's publication job, visible 1 s after the change that queued it) is found as
 * soon as before; after that the runtime is idle and the pause is `idle` (60 s),
 * cut short by activity.
 * Queues are short-polled, not long-polled: local-aws-sqs answers a long poll only when
 * MaxNumberOfMessages are in or the wait is over, and checks its queue on a 10 ms timer for the whole
 * wait, which costs an idle runtime more (measured: docs/benchmarks.md, "Issue 25") than a short poll
 * per queue every 20 s. A message ends its queue's pause when it becomes visible (the runtime's
 * `arrivals`, reported by the SQS emulator: at once for a send, after the delay of a delayed send or
 * a visibility change; by the poller itself when the visibility timeout of a message its worker failed
 * runs out), as Lambda's long poll would take it. The idle pause is therefore only a safety net, and
 * long: each idle round of polls costs the process a few ms of CPU (docs/benchmarks.md, "Idle npm start").
 */
export interface IdlePauses {
  readonly first: number;
  readonly max: number;
  readonly idle: number;
  readonly quietAfter: number;
}
export const QUEUE_IDLE_MS: IdlePauses = { first: 50, max: 500, idle: 60_000, quietAfter: 5000 };
// Every outbox write comes from an API request or a worker invocation, both of which wake the stream
// poller: its idle pause can be long (each GetRecords costs DynamoDB Local tens of ms of CPU on disk).
export const STREAM_IDLE_MS: IdlePauses = { first: 100, max: 100, idle: 60_000, quietAfter: 5000 };

/**
 * Sleeps after an empty read and returns the next pause. Activity (a wake) counts as recent work; it
 * cuts only the idle pause short (to `first` after its start): busy pauses are short anyway, and a busy
 * API must not turn into more polls than the busy pauses make.
 */
async function pauseAfterEmpty(rules: IdlePauses, state: { pause: number; lastActive: number }, activity: Wakeup, signal: AbortSignal, arrivals?: Wakeup): Promise<void> {
  const idle = state.pause > rules.max;
  const done = new AbortController();
  const stop = () => done.abort();
  signal.addEventListener('abort', stop, { once: true });
  const sleeps: Promise<'activity' | 'arrival' | 'timer'>[] = [activity.sleep(state.pause, idle ? rules.first : state.pause, done.signal).then((w) => (w ? 'activity' : 'timer'))];
  if (arrivals) sleeps.push(arrivals.sleep(state.pause, 0, done.signal).then((w) => (w ? 'arrival' : 'timer')));
  const why = await Promise.race(sleeps);
  stop();
  signal.removeEventListener('abort', stop);
  if (why === 'arrival') {
    state.lastActive = Date.now();
    state.pause = rules.first;
    return;
  }
  const woken = why === 'activity';
  if (woken) state.lastActive = Date.now();
  state.pause = woken && idle ? rules.first : Date.now() - state.lastActive > rules.quietAfter ? rules.idle : Math.min(rules.max, state.pause * 2);
}
/**
 * After a read that found records but fewer than a full batch (the poller has caught up), the stream
 * poller waits this long before it reads again, as Lambda's event source polls a shard a few times a
 * second, so that records written meanwhile come in one read instead of many small ones: every
 * GetRecords costs DynamoDB Local about 0.5 ms of CPU before its first record, 0.05 ms per record
 * after it (docs/benchmarks.md, "Where DynamoDB Local's CPU goes"). The same as the busy pause after
 * an empty read, so a record never waits longer than it did: before, the immediate re-read after a
 * partial read was empty and the 100 ms pause followed it. A full read means a backlog: read on at once.
 */
export const STREAM_BATCH_PAUSE_MS = 100;
/** Records per GetRecords, Lambda's batch size for the relay (infra/stacks/service-functions.ts). */
const STREAM_READ_LIMIT = 100;

/** How often the stream poller looks for new shards besides when one closes. */
const SHARD_REFRESH_MS = 60_000;

/**
 * Runs `step` until stopped; a failing step is reported and retried after a pause, as Lambda's pollers
 * do. Stopping aborts a long poll under way, waits for the step and then for `drain` (work the steps left running).
 */
function loop(step: (isStopped: () => boolean, signal: AbortSignal) => Promise<void>, onError: (err: unknown) => void, drain: () => Promise<void> = async () => undefined): Poller {
  let stopped = false;
  const abort = new AbortController();
  const running = (async () => {
    while (!stopped) {
      try {
        await step(() => stopped, abort.signal);
      } catch (err) {
        if (stopped) break;
        onError(err);
        await sleep(500);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      abort.abort();
      await running;
      await drain();
    },
  };
}

export type SqsWorker = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * Lambda's SQS event source on one machine: polls the queue for batches of up to `batchSize`,
 * hands each to the worker as an SQS event with up to `concurrency` invocations running at once (the
 * deployed `maxConcurrency`: one slow batch does not hold the others), and deletes the messages the
 * worker did not report as failed (those come back after the visibility timeout and, after
 * maxReceiveCount, go to the DLQ). It receives only when an invocation is free, as Lambda does.
 */
export function pollQueue(opts: {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  functionName: string;
  worker: SqsWorker;
  batchSize: number;
  concurrency: number;
  onError: (err: unknown) => void;
  /** Told after each invocation: the worker may have written events or jobs for the other pollers. */
  activity?: Wakeup;
  /** The pauses after empty receives (default QUEUE_IDLE_MS; tests shorten them). */
  pauses?: IdlePauses;
  /** Woken when a message arrives in this queue: the poller receives at once instead of finishing its pause. */
  arrivals?: Wakeup;
  /** The queue's visibility timeout: a message the worker failed is looked for again when it runs out. */
  visibilityTimeoutSeconds?: number;
}): Poller {
  const running = new Set<Promise<void>>();
  const activity = opts.activity ?? new Wakeup();
  const rules = opts.pauses ?? QUEUE_IDLE_MS;
  const state = { pause: rules.first, lastActive: Date.now() };

  // A failed message comes back when its visibility timeout (counted from the receive) runs out: wake
  // the poller then, as Lambda's long poll would find it, rather than leave it to the idle pause.
  const wakeWhenVisible = (receivedAt: number) => {
    if (!opts.arrivals || opts.visibilityTimeoutSeconds === undefined) return;
    const arrivals = opts.arrivals;
    setTimeout(() => arrivals.wake(), Math.max(0, receivedAt + opts.visibilityTimeoutSeconds * 1000 - Date.now()) + 50).unref();
  };

  const invoke = async (messages: Message[]) => {
    const receivedAt = Date.now();
    const event: SQSEvent = {
      Records: messages.map((m) => ({
        messageId: m.MessageId!,
        receiptHandle: m.ReceiptHandle!,
        body: m.Body ?? '',
        attributes: (m.Attributes ?? {}) as never,
        messageAttributes: {},
        md5OfBody: m.MD5OfBody ?? '',
        eventSource: 'aws:sqs',
        eventSourceARN: opts.queueArn,
        awsRegion: process.env.AWS_REGION ?? 'us-east-1',
      })),
    };
    let failed = new Set<string>();
    try {
      const res = await opts.worker(event, lambdaContext(opts.functionName, 30000));
      failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      opts.onError(err);
      wakeWhenVisible(receivedAt);
      return; // the whole batch failed: every message comes back after its visibility timeout
    } finally {
      activity.wake();
    }
    if (failed.size > 0) wakeWhenVisible(receivedAt);
    const done = messages.filter((m) => !failed.has(m.MessageId!));
    if (done.length) {
      await opts.sqs.send(
        new DeleteMessageBatchCommand({ QueueUrl: opts.queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
      );
    }
  };

  return loop(
    async (isStopped, signal) => {
      while (running.size >= opts.concurrency) await Promise.race(running);
      const out = await opts.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: opts.queueUrl,
          MaxNumberOfMessages: opts.batchSize,
          WaitTimeSeconds: 0, // see QUEUE_IDLE_MS
          MessageSystemAttributeNames: ['All'],
          // The emulator reads only the older name; Lambda's event carries these attributes either way
          // (ApproximateReceiveCount, MessageGroupId).
          AttributeNames: ['All'],
        }),
        { abortSignal: signal },
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) return pauseAfterEmpty(rules, state, activity, signal, opts.arrivals);
      state.lastActive = Date.now();
      state.pause = rules.first;
      if (isStopped()) return;
      const invocation: Promise<void> = invoke(messages)
        .catch(opts.onError)
        .finally(() => running.delete(invocation));
      running.add(invocation);
    },
    opts.onError,
    async () => {
      await Promise.all(running);
    },
  );
}

export type StreamWorker = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

function toLambdaRecord(r: _Record, streamArn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName as DynamoDBRecord['eventName'],
    eventVersion: r.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: process.env.AWS_REGION ?? 'us-east-1',
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: d.ApproximateCreationDateTime ? Math.floor(d.ApproximateCreationDateTime.getTime() / 1000) : undefined,
      Keys: d.Keys as never,
      NewImage: d.NewImage as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType as never,
    },
  };
}

const ATTRIBUTE_TYPES = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);

/** Whether an image holds a value without its type tag (anywhere, at any depth). */
function hasUntaggedValue(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length !== 1 || !ATTRIBUTE_TYPES.has(entries[0]![0])) return true;
  const [type, inner] = entries[0]!;
  if (type === 'M') return Object.values(inner as Record<string, unknown>).some(hasUntaggedValue);
  if (type === 'L') return (inner as unknown[]).some(hasUntaggedValue);
  return false;
}

/**
 * DynamoDB Local 3.x writes an empty map or list into stream records without its type tag (`{}`
 * instead of `{"M": {}}`; awslabs/amazon-dynamodb-local-samples#37), which no reader can decode, and
 * the relay would retry that record forever. Real DynamoDB does not: the emulator's record is
 * replaced with the item read back from the table (outbox items are written once).
 */
async function repairImages(records: DynamoDBRecord[], table: { client: DynamoDBClient; name: string } | undefined): Promise<DynamoDBRecord[]> {
  if (!table) return records;
  return Promise.all(
    records.map(async (r) => {
      const image = r.dynamodb?.NewImage;
      if (!image || !Object.values(image).some(hasUntaggedValue)) return r;
      const out = await table.client.send(new GetItemCommand({ TableName: table.name, Key: r.dynamodb!.Keys as never, ConsistentRead: true }));
      return out.Item ? { ...r, dynamodb: { ...r.dynamodb, NewImage: out.Item as never } } : r;
    }),
  );
}

/** Whether a GetRecords error means the iterator can no longer be used, and why. */
function iteratorGone(err: unknown): 'expired' | 'trimmed' | null {
  const name = (err as { name?: string } | null)?.name;
  return name === 'ExpiredIteratorException' ? 'expired' : name === 'TrimmedDataAccessException' ? 'trimmed' : null;
}

/**
 * Lambda's DynamoDB-stream event source on one machine (TRIM_HORIZON, as deployed): reads each open
 * shard from its start, applies the deployed filter, and on a reported failure re-reads from
 * the failed record, as Lambda does with reportBatchItemFailures.
 */
export function pollStream(opts: {
  streams: DynamoDBStreamsClient;
  streamArn: string;
  functionName: string;
  worker: StreamWorker;
  onError: (err: unknown) => void;
  /** The table the stream belongs to: images the emulator wrote without type tags are read back from it. */
  table?: { client: DynamoDBClient; name: string };
  /** Wakes the poller from its idle backoff (API responses, worker invocations). */
  activity?: Wakeup;
  /** The pause after a partial read (default STREAM_BATCH_PAUSE_MS). */
  batchPauseMs?: number;
}): Poller {
  const activity = opts.activity ?? new Wakeup();
  const state = { pause: STREAM_IDLE_MS.first, lastActive: Date.now() };
  const iterators = new Map<string, string | null>(); // shard -> next iterator (null: shard closed)
  const lastRead = new Map<string, string>(); // shard -> sequence number of the last record read
  let initialized = false;

  const iteratorAt = async (shardId: string, type: ShardIteratorType, sequence?: string) =>
    (await opts.streams.send(new GetShardIteratorCommand({ StreamArn: opts.streamArn, ShardId: shardId, ShardIteratorType: type, ...(sequence ? { SequenceNumber: sequence } : {}) }))).ShardIterator ?? null;

  const refreshShards = async () => {
    const desc = await opts.streams.send(new DescribeStreamCommand({ StreamArn: opts.streamArn }));
    for (const shard of desc.StreamDescription?.Shards ?? []) {
      if (iterators.has(shard.ShardId!)) continue;
      const open = shard.SequenceNumberRange?.EndingSequenceNumber === undefined;
      // Closed shards seen at start were read by an earlier run (or hold only relayed events); open and
      // new shards are read from their start: the relay is idempotent, so events written just before
      // a stop or before this poller started are relayed, never lost.
      if (!initialized && !open) {
        iterators.set(shard.ShardId!, null);
        continue;
      }
      iterators.set(shard.ShardId!, await iteratorAt(shard.ShardId!, 'TRIM_HORIZON'));
    }
    initialized = true;
  };

  let lastRefresh = 0;
  return loop(async (isStopped, signal) => {
    if (Date.now() - lastRefresh > SHARD_REFRESH_MS) {
      await refreshShards();
      lastRefresh = Date.now();
    }
    let any = false;
    let full = false;
    for (const [shardId, iterator] of iterators) {
      if (!iterator || isStopped()) continue;
      let out;
      try {
        out = await opts.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: STREAM_READ_LIMIT }));
      } catch (err) {
        const gone = iteratorGone(err);
        if (!gone) throw err;
        // As Lambda's event source does: an expired iterator resumes after the last record read; records
        // trimmed from under it (DynamoDB Local trims when several tables share it) from the oldest left.
        // The relay is idempotent, so what is read again is not relayed twice.
        const after = lastRead.get(shardId);
        iterators.set(shardId, gone === 'expired' && after ? await iteratorAt(shardId, 'AFTER_SEQUENCE_NUMBER', after) : await iteratorAt(shardId, 'TRIM_HORIZON'));
        continue;
      }
      const lastSeq = out.Records?.at(-1)?.dynamodb?.SequenceNumber;
      if ((out.Records?.length ?? 0) >= STREAM_READ_LIMIT) full = true;
      const records = await repairImages((out.Records ?? []).map((r) => toLambdaRecord(r, opts.streamArn)).filter(matchesOutboxFilter), opts.table);
      if (records.length) {
        any = true;
        const res = await opts.worker({ Records: records }, lambdaContext(opts.functionName, 30000)).finally(() => activity.wake());
        const failedSeq = res?.batchItemFailures?.[0]?.itemIdentifier;
        if (failedSeq) {
          iterators.set(shardId, await iteratorAt(shardId, 'AT_SEQUENCE_NUMBER', failedSeq));
          throw new Error(`relay failed at sequence ${failedSeq}; retrying`);
        }
      }
      if (lastSeq) lastRead.set(shardId, lastSeq);
      iterators.set(shardId, out.NextShardIterator ?? null);
      if (!out.NextShardIterator) lastRefresh = 0; // closed: look for its child
    }
    if (any) {
      state.lastActive = Date.now();
      state.pause = STREAM_IDLE_MS.first;
      if (!full) await abortableSleep(opts.batchPauseMs ?? STREAM_BATCH_PAUSE_MS, signal);
      return;
    }
    await pauseAfterEmpty(STREAM_IDLE_MS, state, activity, signal); // streams have no long poll
  }, opts.onError);
}
