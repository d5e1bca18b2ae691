import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { outboundJobWrites } from '../../lib/didcomm/outbound';
import { CRED_DEF_JOB_TYPE, registryKeys } from '../../lib/anoncreds/registry';
import { OutboxPublisher } from '../../lib/events/publisher';
import { tenantScope } from '../../lib/store/keys';
import type { ItemStore } from '../../lib/store/port';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import type { GuardDecision } from '../../lib/adapters/access-guard';
import { tenantMessageGroup } from '../../lib/fairness/share';
import type { FunctionName } from '../../lib/service/access';
import type { QueueId } from '../../lib/service/resources';
import { observedTestApi, type TestApi } from '../helpers/runtime';

/**
 * IAM lets a tenant role's session carry any wallet's tag: which wallet a queue worker acts for is its
 * message's `wallet_id`, and nothing else. For each worker, a job naming one wallet, then a job naming
 * another, is put on its queue as the services put them (same body shape, the wallet's message group);
 * every call the worker makes in a session while it handles the job must be in that wallet's session
 * (the local access guard sees each call with the principal IAM would see). The jobs name records
 * that do not exist: the worker looks for them in the wallet's session and finds nothing.
 */
const observed = observedTestApi();
const { decisions } = observed;
let api: TestApi;

beforeAll(() => {
  api = observed.api();
});

const JOBS: { queue: QueueId; fn: FunctionName; job: (wallet: string) => Record<string, unknown> }[] = [
  { queue: 'webhook', fn: 'webhook-delivery', job: (wallet) => ({ v: 1, wallet_id: wallet, delivery_id: 'dlv_none', attempt: 1 }) },
  { queue: 'status', fn: 'status-worker', job: (wallet) => ({ kind: 'publish', wallet_id: wallet, definition_id: 'none', list: 0 }) },
  // A basic message's job: the worker reads the message record (none) in the session and sends nothing.
  {
    queue: 'didcomm-outbound',
    fn: 'didcomm-outbound',
    job: (wallet) => ({ v: 1, wallet_id: wallet, job_id: 'job_none', connection_id: 'none', sender_verkey: 'none', to: { endpoint: 'http://127.0.0.1:1/none', recipient_keys: ['none'], routing_keys: [] }, message: { '@type': 'https://didcomm.org/basicmessage/1.0/message' }, message_id: 'none', attempt: 1 }),
  },
  {
    queue: 'email',
    fn: 'email-worker',
    job: (wallet) => ({
      wallet_id: wallet,
      request_id: 'req_none',
      index: 0,
      email: 'holder@example.invalid',
      schema_id: 'none',
      supported_cred_id: 'none',
      credential_subject: {},
      expires_in: 600,
      base_url: 'http://127.0.0.1:1',
    }),
  },
  // A credential definition that does not exist: the worker looks for it in the job's wallet session and makes nothing.
  { queue: 'anoncreds', fn: 'anoncreds-worker', job: (wallet) => ({ v: 1, wallet_id: wallet, definition_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }) },
];

async function sessionsWhileHandling(queue: QueueId, fn: FunctionName, body: Record<string, unknown>, wallet: string): Promise<GuardDecision[]> {
  const sqs = new SqsJobQueue(new SQSClient({ endpoint: api.rt.endpoints.sqs, region: 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }), api.rt.queueUrls[queue]!);
  decisions.length = 0;
  await sqs.send([{ body: JSON.stringify(body), delaySeconds: 0, group: tenantMessageGroup(wallet) }]);
  // Handled once the worker's calls stop coming: at least one in a session, then a quiet 1.5 s (a call
  // of the first wallet's job that a loaded machine delays past it would be counted as the second's).
  const deadline = Date.now() + 15_000;
  let seen = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1500));
    const now = decisions.filter((d) => d.principal.fn === fn && d.principal.wallet !== null).length;
    if ((now > 0 && now === seen) || Date.now() > deadline) break;
    seen = now;
  }
  return decisions.filter((d) => d.principal.fn === fn);
}

test.each(JOBS)("$fn acts only in the session of its message's wallet", async ({ queue, fn, job }) => {
  const [a, b] = [await api.newWallet(), await api.newWallet()];
  for (const wallet of [String(a.walletId), String(b.walletId)]) {
    const seen = await sessionsWhileHandling(queue, fn, job(wallet), wallet);
    const inSessions = seen.filter((d) => d.principal.wallet !== null);
    expect(inSessions.length).toBeGreaterThan(0);
    expect(inSessions.filter((d) => d.principal.wallet !== wallet).map((d) => `${d.principal.wallet}: ${JSON.stringify(d.request)}`)).toEqual([]);
    // Its own role touches no wallet's data (only queues, mail, the MAC key).
    expect(seen.filter((d) => d.principal.wallet === null && d.request.service === 'dynamodb').map((d) => JSON.stringify(d.request))).toEqual([]);
  }
});

/** Waits until `fn` has made no call for a second (or 15 s passed), after at least `atLeast` calls in a session. */
async function quiet(fn: FunctionName, atLeast = 0): Promise<void> {
  const deadline = Date.now() + 15_000;
  let seen = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = decisions.filter((d) => d.principal.fn === fn).length;
    const inSessions = decisions.filter((d) => d.principal.fn === fn && d.principal.wallet !== null).length;
    if ((now === seen && inSessions >= atLeast) || Date.now() > deadline) return;
    seen = now;
  }
}

test("the webhook relay acts for the wallet whose partition holds the outbox item, and drops an item naming another", async () => {
  const [a, b] = [await api.newWallet(), await api.newWallet()];
  await quiet('webhook-relay'); // the two wallets' own events
  const [walletA, walletB] = [String(a.walletId), String(b.walletId)];
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb, region: 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
  // The outbox item a handler stages, in A's partition; the forged one names B inside A's partition
  // (what a handler of A's session with a bug could write).
  const stage = () => new OutboxPublisher(null as unknown as ItemStore).stage(tenantScope(walletA), 'ping', {}).op;
  const forged = stage();
  const genuine = stage();
  if (forged.type !== 'put' || genuine.type !== 'put') throw new Error('an outbox event is a put');
  decisions.length = 0;
  await doc.send(new PutCommand({ TableName: api.rt.tableName, Item: { ...forged.item, event: { ...(forged.item.event as object), wallet_id: walletB } } }));
  await doc.send(new PutCommand({ TableName: api.rt.tableName, Item: genuine.item }));
  await quiet('webhook-relay', 1); // the stream is in order: the genuine item is relayed after the forged one
  const relay = decisions.filter((d) => d.principal.fn === 'webhook-relay');
  const inSessions = relay.filter((d) => d.principal.wallet !== null);
  expect(inSessions.length).toBeGreaterThan(0);
  expect(inSessions.filter((d) => d.principal.wallet !== walletA).map((d) => `${d.principal.wallet}: ${JSON.stringify(d.request)}`)).toEqual([]);
  // Nothing was queued for B either (status jobs are sent with the relay's own role).
  expect(decisions.filter((d) => d.principal.wallet === walletB)).toEqual([]);
});

test('the relay queues a DIDComm outbound job only for the wallet whose partition holds it', async () => {
  const [a, b] = [await api.newWallet(), await api.newWallet()];
  await quiet('webhook-relay');
  const [walletA, walletB] = [String(a.walletId), String(b.walletId)];
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb, region: 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
  // Jobs of a basic message that does not exist: the worker looks for it in the job's wallet session and sends nothing.
  const job = () => {
    const [op] = outboundJobWrites(tenantScope(walletA), [{ connectionId: 'none', senderVerkey: 'none', to: { endpoint: 'http://127.0.0.1:1/none', recipientKeys: ['none'], routingKeys: [] }, message: { '@type': 'https://didcomm.org/basicmessage/1.0/message' }, messageId: 'none' }], new Date());
    if (op?.type !== 'put') throw new Error('an outbound job is a put');
    return op.item;
  };
  const forged = job();
  decisions.length = 0;
  await doc.send(new PutCommand({ TableName: api.rt.tableName, Item: { ...forged, job: { ...(forged.job as object), wallet_id: walletB } } }));
  await doc.send(new PutCommand({ TableName: api.rt.tableName, Item: job() }));
  await quiet('didcomm-outbound', 1);
  doc.destroy();
  const worker = decisions.filter((d) => d.principal.fn === 'didcomm-outbound' && d.principal.wallet !== null);
  expect(worker.length).toBeGreaterThan(0);
  expect(worker.filter((d) => d.principal.wallet !== walletA).map((d) => `${d.principal.wallet}: ${JSON.stringify(d.request)}`)).toEqual([]);
  expect(decisions.filter((d) => d.principal.wallet === walletB)).toEqual([]);
});

test('the relay queues an AnonCreds job only for the wallet whose partition holds it', async () => {
  const [a, b] = [await api.newWallet(), await api.newWallet()];
  await quiet('webhook-relay');
  const [walletA, walletB] = [String(a.walletId), String(b.walletId)];
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb, region: 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
  // The job item a credential-definition request stages (lib/anoncreds/registry.ts), for a definition that does not exist.
  const job = (id: string) => ({ ...registryKeys.credDefJob(tenantScope(walletA), id), type: CRED_DEF_JOB_TYPE, job: { v: 1, wallet_id: walletA, definition_id: id } });
  const forged = job('01ARZ3NDEKTSV4RRFFQ69G5FAA');
  decisions.length = 0;
  await doc.send(new PutCommand({ TableName: api.rt.tableName, Item: { ...forged, job: { ...forged.job, wallet_id: walletB } } }));
  await doc.send(new PutCommand({ TableName: api.rt.tableName, Item: job('01ARZ3NDEKTSV4RRFFQ69G5FAB') }));
  await quiet('anoncreds-worker', 1);
  doc.destroy();
  const worker = decisions.filter((d) => d.principal.fn === 'anoncreds-worker' && d.principal.wallet !== null);
  expect(worker.length).toBeGreaterThan(0);
  expect(worker.filter((d) => d.principal.wallet !== walletA).map((d) => `${d.principal.wallet}: ${JSON.stringify(d.request)}`)).toEqual([]);
  expect(decisions.filter((d) => d.principal.wallet === walletB)).toEqual([]);
});
