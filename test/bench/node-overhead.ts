/**
 * Part of `npm run bench` (`BENCH_ONLY=node-overhead`): two costs the issuance profile showed in our
 * Node process (docs/benchmarks.md, issue 25), each beside what replaced it, in-process on one core:
 * - a ULID from the `ulid` package (one `getRandomValues` per character) and from lib/ids.ts (a pool);
 * - an AWS SDK request's client-side CPU (build, sign, parse; the transport answers from memory) with
 *   the SDK's default logger and with SDK_CLIENT_DEFAULTS (no log-filter walk of request and response).
 * Knobs: BENCH_NODE_ULIDS (100000), BENCH_NODE_REQUESTS (5000 per row and side, in four alternated rounds, after 1000 discarded per side).
 */
import { GetItemCommand, QueryCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { ulid as packageUlid } from 'ulid';
import { SDK_CLIENT_DEFAULTS } from '../../functions/shared/sdk';
import { ulid } from '../../lib/ids';
import { cannedDynamoDbClient } from '../helpers/canned-dynamodb';
import { runBench } from './harness';
import { loadAverage } from './stats';

const ULIDS = Number(process.env.BENCH_NODE_ULIDS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_NODE_REQUESTS ?? 5000);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** CPU ms per call of `fn`, over `n` calls (the caller warms up first). */
const perCall = async (n: number, fn: () => unknown) => {
  const t = cpuMs();
  for (let i = 0; i < n; i++) await fn();
  return (cpuMs() - t) / n;
};
const warm = async (fn: () => unknown) => {
  for (let i = 0; i < 1000; i++) await fn();
};

const item = (i: number) => ({ PK: { S: 'W#1' }, SK: { S: `EX#${i}` }, state: { S: 'issued' }, data: { M: { subject: { S: 'x'.repeat(200) }, n: { N: String(i) } } } });
const rows = [
  { label: 'GetItem (one item of 5 attributes)', answer: { Item: item(0) }, command: () => new GetItemCommand({ TableName: 't', Key: { PK: { S: 'W#1' }, SK: { S: 'EX#0' } } }) },
  { label: 'Query (a page of 20 such items)', answer: { Items: Array.from({ length: 20 }, (_, i) => item(i)), Count: 20 }, command: () => new QueryCommand({ TableName: 't', KeyConditionExpression: 'PK = :p', ExpressionAttributeValues: { ':p': { S: 'W#1' } } }) },
  {
    label: 'TransactWriteItems (3 puts)',
    answer: {},
    command: () => new TransactWriteItemsCommand({ TransactItems: [0, 1, 2].map((i) => ({ Put: { TableName: 't', Item: item(i), ConditionExpression: 'attribute_not_exists(PK)' } })) }),
  },
];


async function main() {
  console.log(`\n### Our Node process: ULIDs and the SDK's client-side work per request (load average at start ${loadAverage()})\n`);
  console.log('| | before | after | after/before |');
  console.log('|---|---|---|---|');
  await warm(() => packageUlid(Date.now()));
  const a = await perCall(ULIDS, () => packageUlid(Date.now()));
  await warm(() => ulid(Date.now()));
  const b = await perCall(ULIDS, () => ulid(Date.now()));
  console.log(`| one ULID, µs CPU | ${(a * 1000).toFixed(2)} (\`ulid\` package) | ${(b * 1000).toFixed(2)} (lib/ids.ts) | ${(b / a).toFixed(2)}× |`);
  for (const row of rows) {
    const body = JSON.stringify(row.answer);
    const [plain, quiet] = [cannedDynamoDbClient({}, body), cannedDynamoDbClient(SDK_CLIENT_DEFAULTS, body)];
    // Four rounds, the order alternated, so that neither side gets the JIT's warmer half.
    const sides = [() => plain.send(row.command() as never), () => quiet.send(row.command() as never)];
    for (const side of sides) await warm(side);
    let [before, after] = [0, 0];
    const perRound = Math.max(1, Math.floor(REQUESTS / 4));
    for (let r = 0; r < 4; r++) {
      const [x, y] = r % 2 === 0 ? [0, 1] : [1, 0];
      const tx = await perCall(perRound, sides[x]!);
      const ty = await perCall(perRound, sides[y]!);
      before += (x === 0 ? tx : ty) / 4;
      after += (x === 0 ? ty : tx) / 4;
    }
    console.log(`| ${row.label}, ms CPU (SDK default logger → SDK_CLIENT_DEFAULTS) | ${before.toFixed(3)} | ${after.toFixed(3)} | ${(after / before).toFixed(2)}× |`);
  }
  console.log(`\nLoad average at end: ${loadAverage()}.`);
}

runBench(main);
