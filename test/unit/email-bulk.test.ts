import { randomBytes } from 'node:crypto';
import { OutboxPublisher } from '../../lib/events/publisher';
import { BulkEmailService, emailKeys, type EmailJob } from '../../lib/email/bulk';
import { draftFromSdJwt, SupportedCredentialService } from '../../lib/oid4vci/supported';
import { keys, tenantScope } from '../../lib/store/keys';
import type { JobQueue } from '../../lib/webhooks/records';
import { MemoryStore } from '../helpers/memory-store';

/** The request side of bulk email: checked, recorded, queued once, answered the same when repeated. */

const scope = tenantScope('5');
const BASE = 'https://api.example.com';

class RecordingQueue implements JobQueue {
  readonly jobs: EmailJob[] = [];
  failNext = false;
  readonly groups = new Set<string>();
  async send(messages: readonly { body: string; delaySeconds: number; group: string }[]): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('SQS unavailable');
    }
    this.jobs.push(...messages.map((m) => JSON.parse(m.body) as EmailJob));
    for (const m of messages) this.groups.add(m.group);
  }
}

async function setup(now = () => new Date()) {
  const store = new MemoryStore();
  await store.write([{ type: 'put', item: { ...keys.wallet(scope), type: 'wallet', wallet_id: scope.walletId } }]);
  await new SupportedCredentialService({ store }).create(scope, draftFromSdJwt({ id: 'Pid', vct: 'urn:pid', claims: { given_name: { mandatory: true } } }));
  const queue = new RecordingQueue();
  const events = new OutboxPublisher(store, now);
  const service = new BulkEmailService({ store, events, queue, now });
  const eventsOf = (type: string) => [...store.items.values()].filter((i) => String(i.SK).startsWith('EVT#') && (i.event as { type: string }).type === type);
  return { store, queue, service, eventsOf };
}

const entries = [
  { email: 'ada@example.org', schema_id: 'Pid', time_to_accept: 7, attributes: [{ name: 'given_name', value: 'Ada' }] },
  { email: 'bad address', schema_id: 'Pid', time_to_accept: 7, attributes: [] },
  { email: 'nobody@example.org', schema_id: 'Nope', time_to_accept: 7, attributes: [] },
  { email: 'grace@example.org', schema_id: 'Pid', time_to_accept: 1, attributes: [{ name: 'given_name', value: 'Grace' }] },
];

test('each recipient becomes one job; failures get a record and an email.failed event; the answer has the three arrays', async () => {
  const { store, queue, service, eventsOf } = await setup();
  const result = await service.submit(scope, entries, BASE, undefined);
  expect(result).toEqual({ emailsSuccess: ['ada@example.org', 'grace@example.org'], emailsFailure: ['nobody@example.org'], invalidEmails: ['bad address'] });
  expect(queue.jobs.map((j) => [j.email, j.index, j.expires_in, j.credential_subject])).toEqual([
    ['ada@example.org', 0, 7 * 86400, { given_name: 'Ada' }],
    ['grace@example.org', 3, 86400, { given_name: 'Grace' }],
  ]);
  // Every message is in its wallet's group (SQS fair queues).
  expect([...queue.groups]).toEqual(['wallet-5']);
  const requestId = queue.jobs[0]!.request_id;
  expect(await store.get(emailKeys.record(scope, requestId, 2))).toMatchObject({ email: 'nobody@example.org', state: 'failed', failure_reason: 'unknown_schema' });
  expect(eventsOf('email.failed')).toHaveLength(1);
  expect(await service.list(scope, { state: 'failed' })).toEqual([expect.objectContaining({ email: 'nobody@example.org', request_id: requestId })]);
});

test('a repeat (same body, or the same Idempotency-Key) queues nothing and answers as the first; a key reused for another body is a 409', async () => {
  const { queue, service, eventsOf } = await setup();
  const first = await service.submit(scope, entries, BASE, undefined);
  expect(await service.submit(scope, entries, BASE, undefined)).toEqual(first);
  expect(queue.jobs).toHaveLength(2);
  const keyed = await service.submit(scope, entries.slice(0, 1), BASE, 'k-1');
  expect(await service.submit(scope, entries.slice(0, 1), BASE, 'k-1')).toEqual(keyed);
  expect(queue.jobs).toHaveLength(3);
  await expect(service.submit(scope, entries.slice(1), BASE, 'k-1')).rejects.toEqual(expect.objectContaining({ status: 409, code: 'idempotency_key_reused' }));
  expect(eventsOf('email.failed')).toHaveLength(1);
});

test('a request that failed while queueing is queued again by its repeat, with the same ids; its failures keep one event each', async () => {
  const { queue, service, eventsOf } = await setup();
  queue.failNext = true;
  await expect(service.submit(scope, entries, BASE, 'k-2')).rejects.toThrow('SQS unavailable');
  expect(queue.jobs).toHaveLength(0);
  expect((await service.submit(scope, entries, BASE, 'k-2')).emailsSuccess).toHaveLength(2);
  // Indexes are the entries' positions in the request.
  expect(queue.jobs.map((j) => j.index)).toEqual([0, 3]);
  await service.submit(scope, entries, BASE, 'k-2');
  expect(queue.jobs).toHaveLength(2);
  expect(eventsOf('email.failed')).toHaveLength(1);
});

test('10,000 recipients are planned and queued in one call', async () => {
  const { queue, service } = await setup();
  const many = Array.from({ length: 10_000 }, (_, i) => ({ email: `r${i}@example.org`, schema_id: 'Pid', time_to_accept: 3, attributes: [{ name: 'given_name', value: `R${i}` }] }));
  const result = await service.submit(scope, many, BASE, undefined);
  expect(result.emailsSuccess).toHaveLength(10_000);
  expect(new Set(queue.jobs.map((j) => j.index)).size).toBe(10_000);
});

test('an answer too large to keep for repeats is refused before anything is queued', async () => {
  const { queue, service } = await setup();
  const label = () => randomBytes(30).toString('hex');
  const long = Array.from({ length: 10_000 }, () => ({ email: `${label()}@${label()}.${label()}.example.org`, schema_id: 'Pid', time_to_accept: 3, attributes: [{ name: 'given_name', value: 'X' }] }));
  await expect(service.submit(scope, long, BASE, undefined)).rejects.toEqual(expect.objectContaining({ status: 400, code: 'request_too_large' }));
  expect(queue.jobs).toHaveLength(0);
});
