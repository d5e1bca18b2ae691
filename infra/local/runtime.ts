import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Server } from 'node:http';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  QueryCommand,
  ResourceInUseException,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localUsageKeys } from '../../lib/adapters/local-usage-keys';
import { API_DEFAULTS, RESERVED_CONCURRENCY, SOURCE_LIMITS } from '../../lib/service/api-settings';
import { docsRendererDir } from '../../lib/service/docs-assets';
import { ENV } from '../../lib/service/env-names';
import type { FunctionName } from '../../lib/service/access';
import { DLQ_RETENTION_DAYS, QUEUES, TABLE, localQueueName, queueUrlEnvName, type QueueId } from '../../lib/service/resources';
import { ROUTE_GROUPS, type RouteGroup } from '../../lib/service/routes';
import { gsi1, keys } from '../../lib/store/keys';
import { newPublicRef } from '../../lib/tenancy/public-refs';
import { platformUsageKey, walletUsageKey } from '../../lib/service/usage-keys';
import { createGateway, DEFAULT_THROTTLES, type AuthorizerHandler, type GroupHandler, type LocalThrottles, type SourceLimits } from './gateway';
import { freePort, LOOPBACK, startDynamoDbLocal, startSes, startSqs, type Emulator } from './emulators';
import { pollQueue, pollStream, Wakeup, type Poller, type SqsWorker, type StreamWorker } from './pollers';
import type { Resolver } from '../../lib/webhooks/transport';
import { SDK_CLIENT_DEFAULTS } from '../../functions/shared/sdk';

export const LOCAL_TABLE_NAME = 'credential-service';
const REGION = 'us-east-1';
/** Plays the stack name's part: the prefix of usage-plan keys and the issuer-key tag. */
const LOCAL_STACK_NAME = 'credential-service';

export interface LocalRuntimeOptions {
  /** HTTP port of the API (0: any free port). */
  readonly port?: number;
  /** Folder for persistent data (DynamoDB files, the local master key, the mail viewer's mail); null keeps everything in memory. */
  readonly dataDir?: string | null;
  /**
   * An already running DynamoDB Local (its endpoint) to use instead of starting one: the test suites
   * share one per run (test/helpers/shared-dynamodb.ts), which spares each runtime a JVM's start and
   * warm-up. The runtime makes its own table there under a fresh name (`tableName`), left there when
   * it stops. Only with in-memory data (`dataDir` null).
   */
  readonly sharedDynamoDb?: string;
  /** Port of the SES emulator and its mail viewer (0 or absent: any free port; `npm start` fixes it: MAIL_VIEWER_PORT). */
  readonly mailViewerPort?: number;
  /** Use this value as the base (super-admin) key instead of generating one. */
  readonly baseApiKey?: string;
  /** Authorizer decision cache, as on the deployed stage (default: AUTHORIZER_CACHE_TTL_SECONDS, else the stack's default). */
  readonly authorizerCacheTtlSeconds?: number;
  /** Powertools log level of the handlers (default INFO; tests use SILENT). */
  readonly logLevel?: string;
  /** Webhook retry delays in seconds (default: the deployed schedule, about a day); tests shorten it. */
  readonly webhookRetryDelaysSeconds?: readonly number[];
  readonly webhookTimeoutMs?: number;
  /** DNS answers for the webhook SSRF guard (tests only). */
  readonly webhookResolver?: Resolver;
  /** The publication agreement (default: {@link LOCAL_TAA} unless TAA_TEXT is set; null: none). */
  readonly taa?: { text: string; version: string; aml: Record<string, string> } | null;
  /** Throttles of the local gateway (default: the stack's). */
  readonly throttles?: Partial<LocalThrottles>;
  /** Per-source limits of the local gateway, as the stage's WAF applies them (default: SOURCE_LIMITS). */
  readonly sourceLimits?: Partial<SourceLimits>;
  /** Concurrency caps per function, as Lambda's reserved concurrency (default: RESERVED_CONCURRENCY; replaces it whole). */
  readonly reservedConcurrency?: Readonly<Record<string, number>>;
  /** How long a function may run before the gateway answers 504 (default: API Gateway's 29 s). */
  readonly integrationTimeoutMs?: number;
  /** Per-wallet DID limits (default: the stack's). */
  readonly maxDidsPerWallet?: number;
  readonly maxDidCreationsPerMinute?: number;
  /** Stands in for SES in the email worker (tests: an injected failing mailer). */
  readonly mailer?: import('../../lib/email/mailer').Mailer;
  /** Makes credential definitions' keys in the AnonCreds worker (tests: precomputed safe primes; default: fresh ones). */
  readonly anoncredsKeyGenerator?: import('../../lib/anoncreds/cred-def-worker').KeyGenerator;
  /**
   * Invocations of each queue's worker running at once (default: the queue's `consumer.maxConcurrency`,
   * as deployed). Tests shrink a pool so that a small backlog fills it as a large one fills the deployed one.
   */
  readonly workerConcurrency?: Partial<Record<QueueId, number>>;
}

/** The agreement `npm start` asks wallets to accept before they publish a DID (set TAA_* to change it). */
export const LOCAL_TAA = {
  text: 'Local development publication agreement: DIDs published through this service are resolvable by anyone. Publish only identifiers you are entitled to use.',
  version: '1.0',
  aml: {
    service_agreement: 'Accepted through the service API by an authorised user of the wallet',
    on_file: 'An agreement signed on paper and kept on file by the operator',
  },
};

export interface LocalRuntime {
  readonly url: string;
  readonly mailViewerUrl: string;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly ses: string };
  /** The table this runtime uses: `LOCAL_TABLE_NAME`, or a fresh name in a shared DynamoDB Local. */
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  /** The base key when this start chose or generated it; null when an earlier start did (it is kept only as an HMAC). */
  readonly baseApiKey: string | null;
  readonly baseApiKeyGenerated: boolean;
  stop(): Promise<void>;
}

async function masterKey(dataDir: string | null): Promise<string> {
  if (dataDir === null) return randomBytes(32).toString('hex');
  const file = join(dataDir, 'local-master.key');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{64}$/.test(existing)) return existing;
    throw new Error(`${file} is not a 32-byte hex key`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32).toString('hex');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return key;
}

const PUBLIC_DIDS_INDEX = {
  IndexName: TABLE.publicDids.name,
  KeySchema: [{ AttributeName: TABLE.publicDids.partitionKey, KeyType: 'HASH' as const }],
  Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...TABLE.publicDids.projection] },
};

/**
 * Creates the table as the stack defines it (lib/service/resources.ts), or brings an older data
 * folder's table up to it (the stream, the PublicDids index; `indexPublishedDids` then fills the index
 * for DIDs published before it existed); returns the stream ARN.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<string> {
  const stream = { StreamEnabled: true, StreamViewType: TABLE.streamViewType };
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
          { AttributeName: TABLE.sortKey, AttributeType: 'S' },
          { AttributeName: TABLE.gsi1.partitionKey, AttributeType: 'S' },
          { AttributeName: TABLE.gsi1.sortKey, AttributeType: 'S' },
          { AttributeName: TABLE.publicDids.partitionKey, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: TABLE.gsi1.name,
            KeySchema: [
              { AttributeName: TABLE.gsi1.partitionKey, KeyType: 'HASH' },
              { AttributeName: TABLE.gsi1.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
          PUBLIC_DIDS_INDEX,
        ],
        StreamSpecification: stream,
      }),
    );
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  let table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  if (!table?.GlobalSecondaryIndexes?.some((i) => i.IndexName === TABLE.publicDids.name)) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: TABLE.publicDids.partitionKey, AttributeType: 'S' }],
        GlobalSecondaryIndexUpdates: [{ Create: PUBLIC_DIDS_INDEX }],
      }),
    );
    // Writes to the new index's key fail while the index is still being built.
    for (let waited = 0; ; waited += 100) {
      const t = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
      if (t?.GlobalSecondaryIndexes?.find((i) => i.IndexName === TABLE.publicDids.name)?.IndexStatus === 'ACTIVE') break;
      if (waited > 30_000) throw new Error('DynamoDB Local did not finish building the PublicDids index');
      await new Promise((r) => setTimeout(r, 100));
    }
    await indexPublishedDids(client, tableName);
    table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  }
  if (table?.StreamSpecification?.StreamEnabled && table.LatestStreamArn) return table.LatestStreamArn;
  // A data folder from before the outbox: turn the stream on.
  const updated = await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: stream }));
  const arn = updated.TableDescription?.LatestStreamArn;
  if (!arn) throw new Error('DynamoDB Local did not enable the table stream');
  return arn;
}

/** Creates each queue and its DLQ as the stack defines them (lib/service/resources.ts). */
export async function ensureQueues(client: SQSClient): Promise<Record<string, string>> {
  const urls: Record<string, string> = {};
  for (const q of QUEUES) {
    const dlq = await client.send(
      new CreateQueueCommand({ QueueName: localQueueName(q, true), Attributes: { MessageRetentionPeriod: String(DLQ_RETENTION_DAYS * 86400), ...(q.fifo ? { FifoQueue: 'true' } : {}) } }),
    );
    const dlqArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
    const main = await client.send(
      new CreateQueueCommand({
        QueueName: localQueueName(q),
        Attributes: {
          ...(q.fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {}),
          VisibilityTimeout: String(q.visibilityTimeoutSeconds),
          MessageRetentionPeriod: String(q.retentionDays * 86400),
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: q.maxReceiveCount }),
        },
      }),
    );
    urls[q.id] = main.QueueUrl!;
    urls[`${q.id}-dlq`] = dlq.QueueUrl!;
  }
  return urls;
}

/**
 * DIDs published in a data folder from before the PublicDids index carry only their old GSI1 lookup
 * value: give them the new index's attribute, so they stay resolvable. Run once, when `ensureTable`
 * adds the index to such a folder; idempotent.
 */
async function indexPublishedDids(client: DynamoDBClient, tableName: string): Promise<void> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: '#t = :did AND attribute_exists(#g) AND attribute_not_exists(#p)',
        ExpressionAttributeNames: { '#t': 'type', '#g': TABLE.gsi1.partitionKey, '#p': TABLE.publicDids.partitionKey },
        ExpressionAttributeValues: { ':did': { S: 'did' } },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of out.Items ?? []) {
      await client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { [TABLE.partitionKey]: item[TABLE.partitionKey]!, [TABLE.sortKey]: item[TABLE.sortKey]! },
          UpdateExpression: 'SET #p = #g REMOVE #g, #gs',
          ExpressionAttributeNames: { '#p': TABLE.publicDids.partitionKey, '#g': TABLE.gsi1.partitionKey, '#gs': TABLE.gsi1.sortKey },
        }),
      );
    }
    start = out.LastEvaluatedKey;
  } while (start);
}

/**
 * Wallets of an older data folder get what newer ones are created with: their throttling bucket (from
 * before usage plans; an operator's backfill in AWS) and their public reference (from before public
 * URLs named wallets by it; nothing was deployed then, so only data folders need it).
 */
export async function upgradeExistingWallets(client: DynamoDBClient, tableName: string): Promise<void> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TABLE.gsi1.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE.gsi1.partitionKey },
        ExpressionAttributeValues: { ':pk': { S: gsi1.walletListPk } },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of out.Items ?? []) if (item.wallet_id?.S) localUsageKeys.add(walletUsageKey(LOCAL_STACK_NAME, item.wallet_id.S), 'tenants');
    await assignPublicRefs(client, out.Items ?? [], tableName);
    start = out.LastEvaluatedKey;
  } while (start);
}

/**
 * Gives each wallet item without a public reference a new one, with its lookup item, in one
 * transaction as tenancy creates them (lib/tenancy/service.ts); a wallet that has one is left alone.
 * Returns the wallet ids given one.
 */
export async function assignPublicRefs(client: DynamoDBClient, walletItems: readonly Record<string, AttributeValue>[], tableName: string): Promise<string[]> {
  const assigned: string[] = [];
  for (const item of walletItems) {
    const walletId = item.wallet_id?.S;
    if (!walletId || item.public_ref?.S || item.SK?.S !== 'WALLET') continue;
    const ref = newPublicRef();
    const lookup = keys.publicRef(ref);
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: { [TABLE.partitionKey]: { S: lookup.PK }, [TABLE.sortKey]: { S: lookup.SK }, wallet_id: { S: walletId } },
              ConditionExpression: 'attribute_not_exists(#pk)',
              ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: { [TABLE.partitionKey]: item[TABLE.partitionKey]!, [TABLE.sortKey]: item[TABLE.sortKey]! },
              UpdateExpression: 'SET #r = :r',
              ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(#r)',
              ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#r': 'public_ref' },
              ExpressionAttributeValues: { ':r': { S: ref } },
            },
          },
        ],
      }),
    );
    assigned.push(walletId);
  }
  return assigned;
}

/**
 * A table of a shared DynamoDB Local, as an emulator. Stopping leaves the table (in memory, gone with
 * the JVM): DynamoDB Local's DeleteTable trims the stream records of the *other* tables too (their
 * pollers then fail with TrimmedDataAccessException), so a shared JVM must not delete while others run.
 */
function sharedTable(endpoint: string): Emulator {
  return { endpoint, stop: async () => undefined };
}

/**
 * The embedded runtime: DynamoDB Local, the SQS and SES emulators, the local key adapter, and the
 * real handlers behind a local API Gateway. The AWS SDK clients are the real ones, pointed at the
 * emulators through AWS_ENDPOINT_URL_*, so the code path is the deployed one. One per process: the
 * handlers read their configuration from the environment once.
 */

export async function startLocalRuntime(opts: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const dataDir = opts.dataDir === undefined || opts.dataDir === null ? null : resolve(opts.dataDir);
  if (dataDir && opts.sharedDynamoDb) throw new Error('a shared DynamoDB Local holds in-memory data only: no dataDir with sharedDynamoDb');
  const tableName = opts.sharedDynamoDb ? `${LOCAL_TABLE_NAME}-${randomBytes(6).toString('hex')}` : LOCAL_TABLE_NAME;
  if (dataDir) await mkdir(join(dataDir, 'dynamodb'), { recursive: true, mode: 0o700 });

  const started: Emulator[] = [];
  const stopAll = async () => {
    for (const e of started.reverse()) await e.stop().catch(() => undefined);
  };
  // Each queue's poller is woken when a message arrives in it (emulators.ts `reportArrivals`).
  const arrivals = new Map(QUEUES.map((q) => [localQueueName(q), new Wakeup({ sticky: true })]));
  try {
    const emulators = await Promise.allSettled([
      opts.sharedDynamoDb ? Promise.resolve(sharedTable(opts.sharedDynamoDb)) : startDynamoDbLocal(dataDir ? join(dataDir, 'dynamodb') : null),
      startSqs((queueName) => arrivals.get(queueName)?.wake()),
      startSes({ port: opts.mailViewerPort ?? 0, mailFile: dataDir ? join(dataDir, 'mail.json') : null }),
    ]);
    // Those that started are stopped if another failed (a taken mail viewer port, no Java).
    for (const e of emulators) if (e.status === 'fulfilled') started.push(e.value);
    const failed = emulators.find((e) => e.status === 'rejected');
    if (failed) throw failed.reason;
    const [ddb, sqs, ses] = started as [Emulator, Emulator, Emulator];

    // The port is fixed before the handlers load: did:web identifiers contain the public URL.
    const port = opts.port === 0 ? await freePort() : (opts.port ?? 3000);
    const taa = opts.taa === undefined ? (process.env[ENV.taaText] || process.env[ENV.taaFile] ? undefined : LOCAL_TAA) : opts.taa;
    if (opts.taa === null) for (const name of [ENV.taaFile, ENV.taaText, ENV.taaVersion, ENV.taaAml, ENV.taaAmlVersion]) delete process.env[name];
    Object.assign(process.env, {
      [ENV.publicBaseUrl]: `http://${LOOPBACK}:${port}`,
      ...(taa ? { [ENV.taaText]: taa.text, [ENV.taaVersion]: taa.version, [ENV.taaAml]: JSON.stringify(taa.aml), [ENV.taaAmlVersion]: '1.0' } : {}),
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_SES: ses.endpoint,
      AWS_ENDPOINT_URL_SESV2: ses.endpoint,
      [ENV.tableName]: tableName,
      [ENV.keyBackend]: 'local',
      [ENV.localMasterKey]: await masterKey(dataDir),
      [ENV.serviceName]: 'credential-service',
      [ENV.usageKeyPrefix]: LOCAL_STACK_NAME,
      [ENV.logLevel]: opts.logLevel ?? process.env[ENV.logLevel] ?? 'INFO',
      // CloudWatch reads the metrics deployed; locally they would only be noise on stdout.
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...(opts.maxDidsPerWallet ? { [ENV.maxDidsPerWallet]: String(opts.maxDidsPerWallet) } : {}),
      ...(opts.maxDidCreationsPerMinute ? { [ENV.maxDidCreationsPerMinute]: String(opts.maxDidCreationsPerMinute) } : {}),
      // Local only: receivers on this machine are fine; private ranges stay refused.
      [ENV.webhookAllowLoopback]: 'true',
      ...(opts.webhookRetryDelaysSeconds ? { [ENV.webhookRetryDelays]: opts.webhookRetryDelaysSeconds.join(',') } : {}),
      ...(opts.webhookTimeoutMs ? { [ENV.webhookTimeoutMs]: String(opts.webhookTimeoutMs) } : {}),
      // Deployed, the renderer's files sit beside the handler; locally they are read from the package.
      [ENV.docsAssetsDir]: docsRendererDir(),
    });
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_PROFILE;
    // API Gateway's API keys: the base key's bucket, as the stack creates it, and the wallets' ones.
    localUsageKeys.open(dataDir ? join(dataDir, 'usage-keys.json') : null);
    localUsageKeys.add(platformUsageKey(LOCAL_STACK_NAME), 'platform');

    const ddbClient = new DynamoDBClient({ ...SDK_CLIENT_DEFAULTS, endpoint: ddb.endpoint });
    const sqsClient = new SQSClient({ ...SDK_CLIENT_DEFAULTS, endpoint: sqs.endpoint });
    const streamArn = await ensureTable(ddbClient, tableName);
    const queueUrls = await ensureQueues(sqsClient);
    for (const q of QUEUES) process.env[queueUrlEnvName(q.id)] = queueUrls[q.id];
    await upgradeExistingWallets(ddbClient, tableName);
    ddbClient.destroy();

    // Handlers are imported only now: they build their adapters from the environment at load time.
    const groups = new Map<RouteGroup, GroupHandler>();
    for (const group of ROUTE_GROUPS) {
      const mod = (await import(`../../functions/${group}/handler`)) as { handler: GroupHandler };
      groups.set(group, mod.handler);
    }
    const { handler: authorizer } = (await import('../../functions/authorizer/handler')) as { handler: AuthorizerHandler };
    const { handler: bootstrap } = (await import('../../functions/bootstrap/handler')) as {
      handler: (e: { rotate?: boolean } | null) => Promise<{ created: boolean; api_key?: string }>;
    };

    // The event plumbing as deployed: table stream -> relay -> webhook queue -> delivery worker.
    const overrides = opts.webhookResolver ? { resolver: opts.webhookResolver } : {};
    const relay = ((await import('../../functions/workers/webhook-relay')) as { createHandler: () => StreamWorker }).createHandler();
    const delivery = ((await import('../../functions/workers/webhook-delivery')) as { createHandler: (o: object) => SqsWorker }).createHandler(overrides);
    const statusWorker = ((await import('../../functions/workers/status-lists')) as { createHandler: () => SqsWorker }).createHandler();
    const didcommOutbound = ((await import('../../functions/workers/didcomm-outbound')) as { createHandler: (o: object) => SqsWorker }).createHandler(overrides);
    const emailWorker = ((await import('../../functions/workers/email')) as { createHandler: (o: object) => SqsWorker }).createHandler(opts.mailer ? { mailer: opts.mailer } : {});
    const didcommWorker = ((await import('../../functions/workers/didcomm-inbound')) as { createHandler: () => SqsWorker }).createHandler();
    const anoncredsWorker = ((await import('../../functions/workers/anoncreds')) as { createHandler: (o: object) => SqsWorker }).createHandler(opts.anoncredsKeyGenerator ? { generate: opts.anoncredsKeyGenerator } : {});
    const credentialIssuer = ((await import('../../functions/workers/credential-issuer')) as { createHandler: () => SqsWorker }).createHandler();
    const report = (what: string) => (err: unknown) => console.error(`[local ${what}]`, err);
    const streamsClient = new DynamoDBStreamsClient({ ...SDK_CLIENT_DEFAULTS, endpoint: ddb.endpoint });
    const repairClient = new DynamoDBClient({ ...SDK_CLIENT_DEFAULTS, endpoint: ddb.endpoint });
    const handlers: Partial<Record<FunctionName, SqsWorker>> = {
      'webhook-delivery': delivery,
      'status-worker': statusWorker,
      'email-worker': emailWorker,
      'didcomm-worker': didcommWorker,
      'didcomm-outbound': didcommOutbound,
      'anoncreds-worker': anoncredsWorker,
      'credential-issuer': credentialIssuer,
    };
    const workers = Object.fromEntries(
      QUEUES.map((q) => {
        const worker = handlers[q.worker];
        if (!worker) throw new Error(`the local runtime has no handler for ${q.worker}, the worker of queue ${q.id}`);
        return [q.id, { functionName: q.worker, worker }];
      }),
    ) as Record<QueueId, { functionName: string; worker: SqsWorker }>;
    const queueArns: Record<string, string | undefined> = {};
    for (const q of QUEUES) {
      queueArns[q.id] = (await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: queueUrls[q.id], AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
    }
    // API responses and worker invocations wake the stream poller from its idle backoff (pollers.ts).
    const activity = new Wakeup();
    const pollers: Poller[] = [
      pollStream({ streams: streamsClient, streamArn, functionName: 'webhook-relay', worker: relay, onError: report('webhook relay'), table: { client: repairClient, name: tableName }, activity }),
      ...QUEUES.map((q) =>
        pollQueue({
          sqs: sqsClient,
          queueUrl: queueUrls[q.id]!,
          queueArn: queueArns[q.id] ?? `arn:aws:sqs:local:000000000000:${q.id}`,
          ...workers[q.id],
          batchSize: q.consumer.batchSize,
          concurrency: opts.workerConcurrency?.[q.id] ?? q.consumer.maxConcurrency,
          onError: report(workers[q.id].functionName),
          activity,
          arrivals: arrivals.get(localQueueName(q))!,
          visibilityTimeoutSeconds: q.visibilityTimeoutSeconds,
        }),
      ),
    ];
    const stopPollers = async () => {
      await Promise.all(pollers.map((p) => p.stop()));
      streamsClient.destroy();
      repairClient.destroy();
      sqsClient.destroy();
    };
    started.push({ endpoint: '', stop: stopPollers }); // stopped first (reverse order)

    let baseApiKey: string | null = null;
    let baseApiKeyGenerated = false;
    if (opts.baseApiKey) {
      const { BaseKeys } = await import('../../lib/tenancy/base-key');
      const { buildDeps } = await import('../../functions/shared/deps');
      const { macSecrets } = await import('../../functions/shared/secrets');
      const deps = buildDeps('bootstrap', { secrets: macSecrets });
      await new BaseKeys(deps.store, deps.secrets).install(opts.baseApiKey);
      baseApiKey = opts.baseApiKey;
    } else {
      const out = await bootstrap(null);
      if (out.created && out.api_key) {
        baseApiKey = out.api_key;
        baseApiKeyGenerated = true;
      }
    }

    const server: Server = createGateway({
      authorizer,
      authorizerCacheTtlSeconds: opts.authorizerCacheTtlSeconds ?? Number(process.env[ENV.authorizerCacheTtl] ?? API_DEFAULTS.authorizerCacheTtlSeconds),
      throttles: { ...DEFAULT_THROTTLES, ...opts.throttles },
      sourceLimits: { ...SOURCE_LIMITS, ...opts.sourceLimits },
      reservedConcurrency: opts.reservedConcurrency ?? RESERVED_CONCURRENCY,
      usageKeys: localUsageKeys,
      ...(opts.integrationTimeoutMs ? { integrationTimeoutMs: opts.integrationTimeoutMs } : {}),
      groups,
      onError: (err) => console.error('[local gateway]', err),
    });
    server.keepAliveTimeout = 5000;
    server.on('request', (_req, res) => res.once('finish', () => activity.wake()));
    server.listen(port, LOOPBACK);
    await once(server, 'listening');

    return {
      url: `http://${LOOPBACK}:${port}`,
      mailViewerUrl: ses.endpoint,
      endpoints: { dynamodb: ddb.endpoint, sqs: sqs.endpoint, ses: ses.endpoint },
      tableName,
      queueUrls,
      baseApiKey,
      baseApiKeyGenerated,
      async stop() {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
