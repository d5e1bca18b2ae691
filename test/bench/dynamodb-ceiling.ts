/**
 * Part of `npm run bench`: what DynamoDB Local itself sustains here (GetItem through the same SDK),
 * the floor under every figure of the local runtime.
 */
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { performance } from 'node:perf_hooks';
import { startDynamoDbLocal } from '../../infra/local/emulators';

const N = 6000;

async function main() {
  const ddb = await startDynamoDbLocal(null);
  const client = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  await client.send(
    new CreateTableCommand({
      TableName: 'bench',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
    }),
  );
  await client.send(new PutItemCommand({ TableName: 'bench', Item: { PK: { S: 'x' }, v: { S: 'y'.repeat(200) } } }));
  const get = () => client.send(new GetItemCommand({ TableName: 'bench', Key: { PK: { S: 'x' } } }));
  const rows: string[] = [];
  for (const [conc, label] of [[20, 'warm-up'], [1, ''], [20, '']] as const) {
    let issued = 0;
    const lat: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: conc }, async () => {
        while (issued++ < N) {
          const s = performance.now();
          await get();
          lat.push(performance.now() - s);
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    lat.sort((a, b) => a - b);
    if (!label) rows.push(`| ${conc} | ${(N / secs).toFixed(0)} | ${lat[Math.floor(lat.length / 2)]!.toFixed(2)} | ${lat[Math.floor(lat.length * 0.99)]!.toFixed(2)} |`);
  }
  client.destroy();
  await ddb.stop();
  console.log('\n### DynamoDB Local alone: GetItem through the SDK\n');
  console.log('| clients | ops/s | p50 ms | p99 ms |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(r);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
