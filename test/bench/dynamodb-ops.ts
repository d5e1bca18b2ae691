/**
 * Part of `npm run bench` (`BENCH_ONLY=dynamodb-ops`): what each DynamoDB and DynamoDB Streams
 * operation the issuance flow and the local pollers make costs DynamoDB Local's JVM in CPU, per
 * request. DynamoDB Local is started as the runtime starts it (infra/local/emulators.ts), in memory as
 * the benches run it and on disk as `npm start` runs it, with our table and its stream
 * (runtime.ts `ensureTable`). The JVM's CPU is read from /proc/<pid>/stat (10 ms ticks), over many
 * requests one at a time after a warm-up; the same operations are measured again after the table and
 * its stream hold `BENCH_DDB_SEED_FLOWS` (10,000) flows' worth of items and records.
 *
 * Knobs: BENCH_DDB_OPS_N (requests per row, 1000), BENCH_DDB_OPS_WARM_UP (requests per row of the
 * discarded first pass, 500), BENCH_DDB_SEED_FLOWS (10000; 0 skips the second
 * pass), BENCH_DDB_MODES (`memory,disk`).
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDynamoDbLocal } from '../../infra/local/emulators';
import { ensureTable, LOCAL_TABLE_NAME } from '../../infra/local/runtime';
import { processCpuMs } from '../helpers/processes';
import { childPids } from './peer/shared';
import { loadAverage } from './stats';

const N = Number(process.env.BENCH_DDB_OPS_N ?? 1000);
const SEED_FLOWS = Number(process.env.BENCH_DDB_SEED_FLOWS ?? 10_000);
const WARM_UP = Number(process.env.BENCH_DDB_OPS_WARM_UP ?? 500);
const MODES = (process.env.BENCH_DDB_MODES ?? 'memory,disk').split(',') as ('memory' | 'disk')[];
const TABLE_NAME = LOCAL_TABLE_NAME;
const WALLET = 'W#bench';

type Item = Record<string, AttributeValue>;
let serial = 0;
/** An item of about the exchange's size (~800 B, docs/benchmarks.md "What a deployed stage will cost"). */
function item(sk: string, extra: Item = {}): Item {
  return {
    PK: { S: WALLET },
    SK: { S: sk },
    type: { S: 'oid4vci_exchange' },
    state: { S: 'offer' },
    n: { N: String(serial++) },
    created_at: { S: new Date().toISOString() },
    body: { S: 'x'.repeat(640) },
    ...extra,
  };
}
const key = (sk: string): Item => ({ PK: { S: WALLET }, SK: { S: sk } });

interface Ctx {
  readonly ddb: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  readonly jvm: number;
}

/** The stream's shards and an iterator at the end of the open one (what a caught-up poller holds). */
async function latest(c: Ctx): Promise<{ shardId: string; iterator: string }> {
  const desc = await c.streams.send(new DescribeStreamCommand({ StreamArn: c.streamArn }));
  const shard = desc.StreamDescription!.Shards!.find((s) => s.SequenceNumberRange?.EndingSequenceNumber === undefined) ?? desc.StreamDescription!.Shards!.at(-1)!;
  const it = await c.streams.send(new GetShardIteratorCommand({ StreamArn: c.streamArn, ShardId: shard.ShardId!, ShardIteratorType: 'LATEST' }));
  return { shardId: shard.ShardId!, iterator: it.ShardIterator! };
}

/** JVM CPU ms per call of `op` over `n` sequential calls, after `warm` unmeasured ones. */
async function perRequest(c: Ctx, n: number, op: (i: number) => Promise<unknown>, warm = Math.min(200, n)): Promise<{ cpu: number; wall: number }> {
  for (let i = 0; i < warm; i++) await op(i);
  const before = processCpuMs(c.jvm);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await op(warm + i);
  const wall = (performance.now() - t0) / n;
  return { cpu: (processCpuMs(c.jvm) - before) / n, wall };
}

/** Writes `count` items through BatchWriteItem (25 a request): each is one stream record. */
async function seed(c: Ctx, count: number, prefix: string): Promise<void> {
  for (let i = 0; i < count; i += 25) {
    const batch = Array.from({ length: Math.min(25, count - i) }, (_, j) => ({ PutRequest: { Item: item(`${prefix}#${i + j}`) } }));
    let pending: typeof batch | undefined = batch;
    while (pending?.length) {
      const out = await c.ddb.send(new BatchWriteItemCommand({ RequestItems: { [TABLE_NAME]: pending } }));
      pending = out.UnprocessedItems?.[TABLE_NAME] as typeof batch | undefined;
    }
  }
}

/**
 * GetRecords returning `k` records each: `n` × `k` records are written first (unmeasured), then read
 * from their start `k` at a time, as the poller reads a backlog.
 */
async function getRecordsOf(c: Ctx, k: number, n: number): Promise<{ cpu: number; wall: number }> {
  const start = await latest(c);
  await seed(c, k * (n + 20), `GR${k}#${serial}`);
  let iterator = start.iterator;
  let got = 0;
  const r = await perRequest(
    c,
    n,
    async () => {
      const out = await c.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: k }));
      iterator = out.NextShardIterator!;
      got += out.Records?.length ?? 0;
    },
    20,
  );
  if (got !== k * (n + 20)) throw new Error(`GetRecords of ${k}: read ${got} records, expected ${k * (n + 20)}`);
  return r;
}

/** Each operation the flow and the pollers make, in the shapes they make them. */
async function measureAll(c: Ctx, label: string, rows: string[], n = N): Promise<void> {
  const row = (what: string, r: { cpu: number; wall: number }) => {
    rows.push(`| ${label} | ${what} | ${r.cpu.toFixed(2)} | ${r.wall.toFixed(2)} |`);
    if (label !== 'warm-up') console.log(rows.at(-1));
  };
  const tag = `${label}#${serial}`;
  // Items the reads find (and the token's code lookup, the credential's batch of four with one missing).
  await seed(c, 10, `R#${tag}`);
  row('GetItem (consistent, found)', await perRequest(c, n, (i) => c.ddb.send(new GetItemCommand({ TableName: TABLE_NAME, Key: key(`R#${tag}#${i % 10}`), ConsistentRead: true }))));
  row('GetItem (consistent, not found)', await perRequest(c, n, (i) => c.ddb.send(new GetItemCommand({ TableName: TABLE_NAME, Key: key(`NONE#${i}`), ConsistentRead: true }))));
  row(
    'BatchGetItem, 4 keys (3 found)',
    await perRequest(c, n, (i) =>
      c.ddb.send(
        new BatchGetItemCommand({
          RequestItems: { [TABLE_NAME]: { Keys: [key(`R#${tag}#${i % 10}`), key(`R#${tag}#${(i + 1) % 10}`), key(`R#${tag}#${(i + 2) % 10}`), key(`NONE#${i}`)], ConsistentRead: true } },
        }),
      ),
    ),
  );
  row(
    'Query (consistent, 3 items)',
    await perRequest(c, n, () =>
      c.ddb.send(
        new QueryCommand({
          TableName: TABLE_NAME,
          ConsistentRead: true,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :p)',
          ExpressionAttributeValues: { ':pk': { S: WALLET }, ':p': { S: `R#${tag}#` } },
          Limit: 3,
        }),
      ),
    ),
  );
  row('PutItem (new item, attribute_not_exists)', await perRequest(c, n, (i) => c.ddb.send(new PutItemCommand({ TableName: TABLE_NAME, Item: item(`P#${tag}#${i}`), ConditionExpression: 'attribute_not_exists(PK)' }))));
  row(
    'UpdateItem (SET two attributes, condition)',
    await perRequest(c, n, (i) =>
      c.ddb.send(
        new UpdateItemCommand({
          TableName: TABLE_NAME,
          Key: key(`R#${tag}#${i % 10}`),
          UpdateExpression: 'SET #s = :s, n = :n',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':s': { S: `s${i}` }, ':n': { N: String(i) } },
        }),
      ),
    ),
  );
  // The token's transaction without its event: update the exchange, delete the code (as 2 items).
  await seed(c, n + 200, `C#${tag}`);
  const update = (sk: string, i: number): TransactWriteItem => ({
    Update: {
      TableName: TABLE_NAME,
      Key: key(sk),
      UpdateExpression: 'SET #s = :s, n = :n',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#s': 'state' },
      ExpressionAttributeValues: { ':s': { S: `t${i}` }, ':n': { N: String(i) } },
    },
  });
  const put = (sk: string): TransactWriteItem => ({ Put: { TableName: TABLE_NAME, Item: item(sk), ConditionExpression: 'attribute_not_exists(PK)' } });
  row(
    'TransactWriteItems, 2 items (update, delete)',
    await perRequest(c, n, (i) =>
      c.ddb.send(new TransactWriteItemsCommand({ TransactItems: [update(`R#${tag}#${i % 10}`, i), { Delete: { TableName: TABLE_NAME, Key: key(`C#${tag}#${i}`), ConditionExpression: 'attribute_exists(PK)' } }] })),
    ),
  );
  // The token's and credential's shape: update, delete or put, and the event (3 items).
  row(
    'TransactWriteItems, 3 items (update, put, put)',
    await perRequest(c, n, (i) => c.ddb.send(new TransactWriteItemsCommand({ TransactItems: [update(`R#${tag}#${i % 10}`, i), put(`N#${tag}#${i}`), put(`E#${tag}#${i}`)] }))),
  );
  // The offer's shape: exchange, code, offer by reference, event (4 new items).
  row(
    'TransactWriteItems, 4 items (4 puts)',
    await perRequest(c, n, (i) => c.ddb.send(new TransactWriteItemsCommand({ TransactItems: [put(`X#${tag}#${i}`), put(`K#${tag}#${i}`), put(`O#${tag}#${i}`), put(`V#${tag}#${i}`)] }))),
  );
  // The stream.
  row('DescribeStream', await perRequest(c, n, () => c.streams.send(new DescribeStreamCommand({ StreamArn: c.streamArn }))));
  const { shardId } = await latest(c);
  row('GetShardIterator (LATEST)', await perRequest(c, n, () => c.streams.send(new GetShardIteratorCommand({ StreamArn: c.streamArn, ShardId: shardId, ShardIteratorType: 'LATEST' }))));
  row('GetShardIterator (TRIM_HORIZON)', await perRequest(c, n, () => c.streams.send(new GetShardIteratorCommand({ StreamArn: c.streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }))));
  // An empty read at the end of the stream, as a caught-up poller makes it (its iterator moves on).
  let it = (await latest(c)).iterator;
  row(
    'GetRecords, empty (at the end of the stream)',
    await perRequest(c, n, async () => {
      const out = await c.streams.send(new GetRecordsCommand({ ShardIterator: it, Limit: 100 }));
      if (out.Records?.length) throw new Error('expected an empty read');
      it = out.NextShardIterator!;
    }),
  );
  row('GetRecords, 1 record', await getRecordsOf(c, 1, n));
  row('GetRecords, 10 records', await getRecordsOf(c, 10, Math.max(50, Math.floor(n / 5))));
  row('GetRecords, 100 records', await getRecordsOf(c, 100, Math.max(20, Math.floor(n / 20))));
}

/** Items and stream records of `flows` issuance flows: per flow 7 items kept, 10 stream records. */
async function seedFlows(c: Ctx, flows: number): Promise<void> {
  // Offer: 4 puts; token: update, delete, put event; credential: update, put nonce, put event. As puts
  // and overwrites (BatchWriteItem has no update), which leave the same items and one record each.
  for (let f = 0; f < flows; f += 250) {
    const batch = Math.min(250, flows - f);
    await seed(c, batch * 7, `F#${f}`);
    await seed(c, batch * 3, `F#${f}`); // overwrites: the updates' and the delete's records
  }
}

async function run(mode: 'memory' | 'disk', rows: string[]): Promise<void> {
  const dir = mode === 'disk' ? await mkdtemp(join(tmpdir(), 'bench-ddb-ops-')) : null;
  const emulator = await startDynamoDbLocal(dir);
  const jvm = childPids(process.pid, 'java')[0];
  if (!jvm) throw new Error('no DynamoDB Local JVM among this process’s children');
  const ddb = new DynamoDBClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  const streams = new DynamoDBStreamsClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  try {
    const streamArn = await ensureTable(ddb, TABLE_NAME);
    const c: Ctx = { ddb, streams, streamArn, jvm };
    // A whole pass first, discarded: the JVM compiles its hot paths (on other threads, counted in its
    // CPU) during the first thousands of requests.
    await measureAll(c, 'warm-up', [], WARM_UP);
    await new Promise((r) => setTimeout(r, 2000));
    const idle0 = processCpuMs(jvm);
    await new Promise((r) => setTimeout(r, 5000));
    rows.push(`| ${mode}, small table | (idle JVM, per second) | ${((processCpuMs(jvm) - idle0) / 5).toFixed(2)} | |`);
    console.log(rows.at(-1));
    await measureAll(c, `${mode}, small table`, rows);
    if (SEED_FLOWS > 0) {
      const t0 = performance.now();
      const cpu0 = processCpuMs(jvm);
      await seedFlows(c, SEED_FLOWS);
      console.log(`| ${mode} | (seeded ${SEED_FLOWS} flows' worth: ${SEED_FLOWS * 10} items written, in ${((performance.now() - t0) / 1000).toFixed(0)} s, ${((processCpuMs(jvm) - cpu0) / 1000).toFixed(0)} s JVM CPU) | | |`);
      await measureAll(c, `${mode}, +${SEED_FLOWS} flows`, rows);
    }
  } finally {
    ddb.destroy();
    streams.destroy();
    await emulator.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

async function main() {
  console.log('\n### DynamoDB Local: JVM CPU per request, by operation\n');
  console.log(`Load average at start: ${loadAverage()}. ${N} requests per row, one at a time, after a warm-up; JVM CPU from /proc (10 ms ticks).\n`);
  const rows: string[] = [];
  // Rows as they are measured: a run on a loaded machine takes long.
  console.log('| DynamoDB Local | operation | JVM CPU ms per request | wall ms per request |');
  console.log('|---|---|---|---|');
  for (const mode of MODES) await run(mode, rows);
  console.log(`\nLoad average at end: ${loadAverage()}.`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
