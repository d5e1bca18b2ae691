/**
 * Part of `npm run bench`: the webhook plumbing.
 * 1. Publish overhead: a state change written alone vs. in one transaction with its outbox event.
 * 2. One worker's delivery rate: the delivery handler, in process, fed SQS batches of 10 jobs one
 *    batch after another (one Lambda instance), delivering to a receiver on loopback.
 * 3. The whole path: pings through the API -> outbox -> stream relay -> SQS -> worker -> receiver.
 */
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSEvent, SQSBatchResponse } from 'aws-lambda';
import { startTestApi } from '../helpers/runtime';
import { startReceiver } from '../helpers/receiver';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { OutboxPublisher } from '../../lib/events/publisher';
import { keys, tenantScope } from '../../lib/store/keys';
import { deliveryIdFor, deliveryItem, type DeliveryJob } from '../../lib/webhooks/records';

const ms = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function main() {
  const [api, rx] = await Promise.all([startTestApi(), startReceiver()]);
  const store = new DynamoDbStore(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }), process.env.TABLE_NAME!);
  const w = await api.newWallet('bench');
  const scope = tenantScope(String(w.walletId));
  const publisher = new OutboxPublisher(store);

  // 1. Publish overhead: the same change with and without its event, as a single write and as a
  // transaction (most changes already are one: a record and its uniqueness item, say).
  const N = Number(process.env.BENCH_WH_PUBLISH ?? 1500);
  const pairs: { label: string; without: (i: number) => Promise<void>; with: (i: number) => Promise<void> }[] = [
    {
      label: 'single item: PutItem vs. TransactWriteItems(item, event)',
      without: (i) => store.write([{ type: 'put', item: { ...keys.apiKey(scope, `a-${i}`), n: i } }]),
      with: (i) => store.write([{ type: 'put', item: { ...keys.apiKey(scope, `b-${i}`), n: i } }, publisher.stage(scope, 'ping', { n: i }).op]),
    },
    {
      label: 'transaction of 2 vs. the same 2 + event',
      without: (i) =>
        store.write([
          { type: 'put', item: { ...keys.apiKey(scope, `c-${i}`), n: i } },
          { type: 'put', item: { ...keys.apiKeyName(scope, `c-${i}`), n: i }, condition: 'not_exists' },
        ]),
      with: (i) =>
        store.write([
          { type: 'put', item: { ...keys.apiKey(scope, `d-${i}`), n: i } },
          { type: 'put', item: { ...keys.apiKeyName(scope, `d-${i}`), n: i }, condition: 'not_exists' },
          publisher.stage(scope, 'ping', { n: i }).op,
        ]),
    },
  ];
  console.log('\n### Publish overhead: the same change without and with its outbox event (DynamoDB Local, sequential)\n');
  console.log('| change | without: mean / p50 / p99 ms | with event: mean / p50 / p99 ms | added: mean / p50 ms |');
  console.log('|---|---|---|---|');
  for (const pair of pairs) {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < N + 200; i++) {
      const t0 = performance.now();
      await pair.without(i);
      const t1 = performance.now();
      await pair.with(i);
      const t2 = performance.now();
      if (i >= 200) {
        a.push(t1 - t0);
        b.push(t2 - t1);
      }
    }
    const f = (xs: number[]) => `${mean(xs).toFixed(2)} / ${ms(xs, 50).toFixed(2)} / ${ms(xs, 99).toFixed(2)}`;
    console.log(`| ${pair.label} | ${f(a)} | ${f(b)} | **${(mean(b) - mean(a)).toFixed(2)} / ${(ms(b, 50) - ms(a, 50)).toFixed(2)}** |`);
  }

  // 2. One worker, in process, fed jobs directly (not through SQS). Events and deliveries are written
  // before the targets are added, so the relay (which skips targets added after an event) leaves them be.
  // The dispatcher admits at most `perTenant` attempts of a wallet at once and `perTarget` to one target
  // (lib/service/resources.ts), and puts the rest back on the queue: a batch of one wallet's 10 jobs to
  // one URL is half deferred by design. So the batches mix two wallets, five jobs each, over two targets
  // each; whatever is deferred anyway is delivered later by the local runtime's own worker, and the
  // figure is the time until the receiver has every delivery.
  const JOBS = Number(process.env.BENCH_WH_JOBS ?? 3000);
  const w2 = await api.newWallet('bench-2');
  const wallets = [w, w2].map((x, k) => ({ key: x.apiKey, scope: tenantScope(String(x.walletId)), targets: [0, 1].map((t) => `${rx.url}/bench-${k}-${t}`) }));
  const paths = wallets.flatMap((x) => x.targets.map((t) => new URL(t).pathname));
  const jobs: DeliveryJob[] = [];
  const at = new Date();
  for (let i = 0; i < JOBS; i++) {
    // Batch i/10: jobs 0-4 of wallet 0, 5-9 of wallet 1; targets alternate within a wallet.
    const owner = wallets[Math.floor(i / 5) % 2]!;
    const target = owner.targets[i % 2]!;
    const staged = publisher.stage(owner.scope, 'ping', { n: i });
    const id = deliveryIdFor(staged.event.id, target);
    const d = { delivery_id: id, event_id: staged.event.id, event_type: 'ping', url: target, status: 'pending' as const, attempt_count: 0, attempts: [], created_at: at.toISOString(), updated_at: at.toISOString() };
    await store.write([staged.op, { type: 'put', item: deliveryItem(owner.scope, d, Math.floor(Date.now() / 1000) + 3600) }]);
    jobs.push({ v: 1, wallet_id: owner.scope.walletId, delivery_id: id, attempt: 1 });
  }
  await new Promise((r) => setTimeout(r, 50));
  for (const x of wallets) {
    const put = await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: x.key, body: { urls: x.targets } });
    if (put.status !== 200) throw new Error(`settings: ${put.status}`);
  }
  await new Promise((r) => setTimeout(r, 3000)); // the relay drains the stream (and fans out nothing)
  const { createHandler } = (await import('../../functions/workers/webhook-delivery')) as {
    createHandler: () => (e: SQSEvent, c: Context) => Promise<SQSBatchResponse>;
  };
  const worker = createHandler();
  const context = { getRemainingTimeInMillis: () => 30000, awsRequestId: 'bench', functionName: 'bench' } as unknown as Context;
  const receivedAll = () => paths.reduce((n, path) => n + rx.received(path).length, 0);
  const t0 = performance.now();
  for (let i = 0; i < jobs.length; i += 10) {
    const batch = jobs.slice(i, i + 10);
    const res = await worker(
      { Records: batch.map((j, k) => ({ messageId: `${i + k}`, receiptHandle: '', body: JSON.stringify(j), attributes: {} as never, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn', awsRegion: 'us-east-1' })) },
      context,
    );
    if (res.batchItemFailures.length) throw new Error('worker reported failures');
  }
  const fedSecs = (performance.now() - t0) / 1000;
  const direct = receivedAll();
  const deadline = Date.now() + 120_000;
  while (receivedAll() < JOBS) {
    if (Date.now() > deadline) throw new Error(`receiver got ${receivedAll()} of ${JOBS} within 120 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const secs = (performance.now() - t0) / 1000;
  console.log('\n### One delivery worker (in process, batches of 10: two wallets x five jobs, two targets each; receiver on loopback answering 200)\n');
  console.log('| deliveries | delivered by the fed worker | deferred (delivered later by the local worker) | fed in s | all delivered s | deliveries/s | ms per batch of 10 |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(`| ${JOBS} | ${direct} | ${JOBS - direct} | ${fedSecs.toFixed(1)} | ${secs.toFixed(1)} | ${(JOBS / secs).toFixed(0)} | ${((fedSecs * 1000) / (JOBS / 10)).toFixed(1)} |`);
  if (rx.requests.length !== receivedAll()) throw new Error('the receiver got requests on paths no target names');

  // 3. End to end through the API and the local event plumbing.
  // The stream still holds the events of parts 1 and 2 (thousands), which the relay reads in order before
  // any new one: a first ping, delivered, shows it has caught up; then quiet for 2 s, then the count.
  const E = Number(process.env.BENCH_WH_PINGS ?? 500);
  const e2ePath = paths[0]!;
  const first = rx.received(e2ePath).length;
  if ((await api.call('POST', '/api/v1/settings/webhook-target-urls/ping', { key: w.apiKey })).status !== 202) throw new Error('ping');
  await rx.waitFor(e2ePath, first + 1, 600_000);
  for (let last = -1; last !== rx.requests.length; ) {
    last = rx.requests.length;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const base = rx.received(e2ePath).length;
  const t3 = performance.now();
  for (let i = 0; i < E; i++) {
    const r = await api.call('POST', '/api/v1/settings/webhook-target-urls/ping', { key: w.apiKey });
    if (r.status !== 202) throw new Error(`ping: ${r.status}`);
  }
  const published = performance.now();
  await rx.waitFor(e2ePath, base + E, 120000);
  const done = performance.now();
  console.log('\n### End to end: API ping -> outbox -> stream relay -> SQS emulator -> worker -> receiver\n');
  console.log('| events | publish s | all delivered s | events/s | last delivery after last publish ms |');
  console.log('|---|---|---|---|---|');
  console.log(`| ${E} | ${((published - t3) / 1000).toFixed(1)} | ${((done - t3) / 1000).toFixed(1)} | ${(E / ((done - t3) / 1000)).toFixed(0)} | ${(done - published).toFixed(0)} |`);

  await Promise.all([api.rt.stop(), rx.close()]);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
