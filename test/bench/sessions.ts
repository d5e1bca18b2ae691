/**
 * Part of `npm run bench` (BENCH_ONLY=sessions): what a wallet session adds to one store call, with
 * the network taken out (the client answers at once), so only our code is timed:
 * - plain: one client, no session (the code before issue 9);
 * - session: the call inside `inSession`, the client picked per wallet (what runs deployed — there the
 *   session's credentials come from one AssumeRole per wallet per hour, cached by the SDK);
 * - session + guard: plus the local access guard (only in `npm start` and the tests).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { performance } from 'node:perf_hooks';
import { guardDynamoDb } from '../../lib/adapters/access-guard';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { ClientsByWallet } from '../../lib/adapters/wallet-sessions';
import { keys, tenantScope } from '../../lib/store/keys';
import { inSession, sessionWallet } from '../../lib/store/session';

const N = Number(process.env.BENCH_SESSION_CALLS ?? 50_000);

function instantClient(): DynamoDBClient {
  const c = new DynamoDBClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  c.middlewareStack.add(() => async () => ({ output: { $metadata: {}, Item: { PK: 'W#1', SK: 'WALLET' } }, response: {} }) as never, { step: 'build', priority: 'low' });
  return c;
}

async function time(label: string, call: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 2000; i++) await call(i); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await call(i);
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const us = (ms: number) => (ms * 1000).toFixed(1);
  const mean = samples.reduce((a, b) => a + b, 0) / N;
  return { label, mean, row: `| ${label} | ${us(mean)} | ${us(samples[Math.floor(N / 2)]!)} | ${us(samples[Math.floor(N * 0.99)]!)} |` };
}

async function main() {
  const wallets = Array.from({ length: 50 }, (_, i) => tenantScope(String(i + 1)));
  const plain = new DynamoDbStore(instantClient(), 't');
  const perWallet = (guard: boolean) => {
    const clients = new ClientsByWallet<DynamoDBClient>((w) => (guard ? guardDynamoDb(instantClient(), { fn: 'tenancy', wallet: w }) : instantClient()));
    return new DynamoDbStore(() => clients.get(sessionWallet()), 't');
  };
  const session = perWallet(false);
  const guarded = perWallet(true);
  const scopeOf = (i: number) => wallets[i % wallets.length]!;
  const rows = [
    await time('plain client, no session', (i) => plain.get(keys.wallet(scopeOf(i)))),
    await time('wallet session (deployed path)', (i) => inSession(scopeOf(i), () => session.get(keys.wallet(scopeOf(i))))),
    await time('wallet session + local access guard', (i) => inSession(scopeOf(i), () => guarded.get(keys.wallet(scopeOf(i))))),
  ];
  console.log(`\n### One store call, network taken out (${N} calls, 50 wallets round-robin)\n`);
  console.log('| path | mean µs | p50 µs | p99 µs |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(r.row);
  const [base, sess, guard] = rows.map((r) => r.mean);
  console.log(`\nsession adds ${((sess! - base!) * 1000).toFixed(1)} µs per call (${(sess! / base!).toFixed(2)}×); the guard a further ${((guard! - sess!) * 1000).toFixed(1)} µs`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
