import { jest } from '@jest/globals';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { Webhook } from 'standardwebhooks';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import { OutboxPublisher } from '../../lib/events/publisher';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { keys, tenantScope } from '../../lib/store/keys';
import { WebhookDispatcher, type AttemptReport } from '../../lib/webhooks/dispatcher';
import { jobFromOutboxItem, signingGenerations, WebhookSettingsRepo, type DeliveryJob, type JobQueue } from '../../lib/webhooks/records';
import { STALLED_AFTER_MS, WebhookService } from '../../lib/webhooks/service';
import type { WebhookRequest, WebhookResult, WebhookTransport } from '../../lib/webhooks/transport';
import { MemoryStore } from '../helpers/memory-store';

const T0 = Date.parse('2026-11-22T12:00:00Z');

function setup(responses: WebhookResult['outcome'][] = []) {
  let now = T0;
  const reports: AttemptReport[] = [];
  const clock = () => new Date(now);
  const store = new MemoryStore();
  const sent: { job: DeliveryJob; delaySeconds: number }[] = [];
  const queue: JobQueue = {
    send: async (messages) => {
      for (const m of messages) {
        const job = JSON.parse(m.body) as DeliveryJob;
        // Every message is in its wallet's group (SQS fair queues).
        if (m.group !== `wallet-${job.wallet_id}`) throw new Error(`message of wallet ${job.wallet_id} in group ${m.group}`);
        sent.push({ job, delaySeconds: m.delaySeconds });
      }
    },
  };
  const requests: WebhookRequest[] = [];
  const transport: WebhookTransport = {
    post: async (req) => {
      requests.push(req);
      return { outcome: responses.shift() ?? { kind: 'response', status: 200 }, durationMs: 5 };
    },
  };
  const secrets = new LocalSecretDeriver('ab'.repeat(32));
  const dispatcher = new WebhookDispatcher({
    store,
    secrets,
    queue,
    transport,
    retryDelaysSeconds: [10, 3645],
    timeoutMs: 1000,
    now: clock,
    random: () => 0.5, // no jitter
    onAttempt: (a) => reports.push(a),
  });
  const scope = tenantScope('7');
  const settings = new WebhookSettingsRepo(store, clock);
  const publisher = new OutboxPublisher(store, clock);
  const service = new WebhookService({ store, secrets, events: publisher, allowLoopback: false, now: clock });
  /** What the stream relay does with the staged jobs (outbox items) written since the last call. */
  const relayStaged = async () => {
    const staged = [...store.items.values()].filter((i) => String(i.SK).startsWith('JOBQ#') && !i.relayed);
    for (const item of staged) {
      item.relayed = true;
      await dispatcher.enqueueStaged(jobFromOutboxItem(item)!);
    }
    return staged.length;
  };
  return {
    store, sent, requests, dispatcher, scope, settings, publisher, service, relayStaged, reports,
    advance: (ms: number) => (now += ms),
    setTargets: (urls: string[]) =>
      settings.mutate(scope, (s) => ({ ...s, targets: urls.map((url) => ({ url, state: 'active' as const, added_at: new Date(T0 - 1000).toISOString() })) })),
    /** Targets, one ping event fanned out to them; returns the first job (taken off the queue). */
    async firstJob(urls: string[]): Promise<DeliveryJob> {
      await this.setTargets(urls);
      await dispatcher.fanOut(await publisher.publish(scope, 'ping', {}));
      return sent.shift()!.job;
    },
  };
}

describe('WebhookDispatcher', () => {
  test('fan-out makes one delivery per active target, idempotently', async () => {
    const s = setup();
    await s.setTargets(['https://a.example/in', 'https://b.example/in']);
    const event = await s.publisher.publish(s.scope, 'ping', {});
    expect(await s.dispatcher.fanOut(event)).toBe(2);
    expect(s.sent.map((m) => m.job.attempt)).toEqual([1, 1]);
    // The stream delivers the record again: no new delivery, the first jobs are re-sent (nothing ran yet).
    expect(await s.dispatcher.fanOut(event)).toBe(2);
    expect((await s.store.query('W#7', { skBeginsWith: 'DLV#' })).length).toBe(2);
    // After an attempt ran, a replay sends nothing.
    await s.dispatcher.runJob(s.sent[0]!.job);
    expect(await s.dispatcher.fanOut(event)).toBe(1);
  });

  test('a stream batch reads each wallet’s settings once, and a failed read is not kept', async () => {
    const s = setup();
    await s.setTargets(['https://a.example/in']);
    const other = tenantScope('8');
    await s.settings.mutate(other, (x) => ({ ...x, targets: [{ url: 'https://b.example/in', state: 'active', added_at: new Date(T0 - 1000).toISOString() }] }));
    const settingsReads = () => get.mock.calls.filter(([k]) => k.SK === keys.webhookSettings(s.scope).SK).length;
    const get = jest.spyOn(s.store, 'get');
    const batch = s.dispatcher.forBatch();
    const events = [
      await s.publisher.publish(s.scope, 'ping', {}),
      await s.publisher.publish(other, 'ping', {}),
      await s.publisher.publish(s.scope, 'ping', {}),
      await s.publisher.publish(s.scope, 'ping', {}),
    ];
    for (const e of events) expect(await batch.fanOut(e)).toBe(1);
    expect(settingsReads()).toBe(2); // wallet 7 once, wallet 8 once
    expect(s.sent.map((m) => m.job.wallet_id)).toEqual(['7', '8', '7', '7']);
    // The next batch reads again (settings may have changed in between).
    await s.dispatcher.forBatch().fanOut(events[0]!);
    expect(settingsReads()).toBe(3);
    // A read that fails fails its record, and the retry of the record reads again.
    const retried = s.dispatcher.forBatch();
    get.mockRejectedValueOnce(new Error('throttled'));
    await expect(retried.fanOut(events[0]!)).rejects.toThrow('throttled');
    expect(await retried.fanOut(events[0]!)).toBe(1);
    expect(settingsReads()).toBe(5);
  });

  test('targets added after the event do not receive it', async () => {
    const s = setup();
    const event = await s.publisher.publish(s.scope, 'ping', {});
    s.advance(1000);
    await s.settings.mutate(s.scope, (x) => ({ ...x, targets: [{ url: 'https://late.example/', state: 'active', added_at: new Date(T0 + 1000).toISOString() }] }));
    expect(await s.dispatcher.fanOut(event)).toBe(0);
  });

  test('a retry is recorded and queued with its delay; delays beyond 15 minutes are chained hops', async () => {
    const s = setup([{ kind: 'response', status: 500 }, { kind: 'timeout' }, { kind: 'response', status: 502 }]);
    await s.setTargets(['https://a.example/in']);
    const event = await s.publisher.publish(s.scope, 'ping', {});
    await s.dispatcher.fanOut(event);
    await s.dispatcher.runJob(s.sent.shift()!.job);
    const retry1 = s.sent.shift()!;
    expect(retry1).toEqual({ job: expect.objectContaining({ attempt: 2, not_before: T0 + 10000 }), delaySeconds: 10 });

    s.advance(10000);
    await s.dispatcher.runJob(retry1.job);
    const retry2 = s.sent.shift()!;
    expect(retry2.job).toMatchObject({ attempt: 3, not_before: T0 + 10000 + 3645000 });
    expect(retry2.delaySeconds).toBe(900);

    // Received after the first hop: too early, so it goes back with the remaining delay, no request.
    s.advance(900_000);
    const before = s.requests.length;
    await s.dispatcher.runJob(retry2.job);
    expect(s.requests.length).toBe(before);
    expect(s.sent.shift()).toEqual({ job: retry2.job, delaySeconds: 900 });

    s.advance(3645000 - 900_000);
    await s.dispatcher.runJob(retry2.job);
    const d = (await s.store.get(keys.webhookDelivery(s.scope, retry1.job.delivery_id)))!;
    expect(d).toMatchObject({ status: 'failed', attempt_count: 3, final_reason: 'retries exhausted' });
    expect((d.attempts as { outcome: string }[]).map((a) => a.outcome)).toEqual(['http_error', 'timeout', 'http_error']);
    expect(s.sent).toEqual([]);
  });

  test('a duplicate job makes no request and queues nothing: duplicates never multiply', async () => {
    const s = setup([{ kind: 'response', status: 500 }]);
    const first = await s.firstJob(['https://a.example/in']);
    await s.dispatcher.runJob(first);
    expect(s.sent).toHaveLength(1);
    // SQS hands the first job over again, twice.
    await s.dispatcher.runJob(first);
    await s.dispatcher.runJob(first);
    expect(s.requests).toHaveLength(1);
    expect(s.sent).toHaveLength(1);
  });

  test('a run that recorded its retry but died before queueing it is finished by the redelivered job, once', async () => {
    const s = setup([{ kind: 'response', status: 500 }]);
    const first = await s.firstJob(['https://a.example/in']);
    await s.dispatcher.runJob(first);
    const next = s.sent.shift()!;
    // Undo the "queued" mark, as if the worker had died between recording and queueing.
    await s.store.write([{ type: 'update', key: keys.webhookDelivery(s.scope, first.delivery_id), set: { next_enqueued: false } }]);
    await s.dispatcher.runJob(first);
    expect(s.sent).toEqual([next]);
    await s.dispatcher.runJob(first);
    expect(s.sent).toEqual([next]);
    expect(s.requests).toHaveLength(1);
  });

  test('a 410 whose target was not yet disabled is disabled when the job comes back', async () => {
    const s = setup([{ kind: 'response', status: 410 }]);
    const job = await s.firstJob(['https://gone.example/in']);
    // The first run records the 410 but loses the settings write.
    const proto = WebhookSettingsRepo.prototype;
    const original = proto.mutate;
    proto.mutate = async () => {
      throw new Error('throttled');
    };
    try {
      await expect(s.dispatcher.runJob(job)).rejects.toThrow('throttled');
    } finally {
      proto.mutate = original;
    }
    await s.dispatcher.runJob(job);
    expect((await s.settings.load(s.scope)).targets[0]).toMatchObject({ state: 'disabled' });
    expect(s.requests).toHaveLength(1);
  });

  test('every request is signed; a target removed meanwhile cancels the delivery without a request', async () => {
    const s = setup();
    await s.setTargets(['https://a.example/in']);
    const event = await s.publisher.publish(s.scope, 'ping', {});
    await s.dispatcher.fanOut(event);
    await s.setTargets([]);
    await s.dispatcher.runJob(s.sent[0]!.job);
    expect(s.requests).toHaveLength(0);
    expect(await s.store.get(keys.webhookDelivery(s.scope, s.sent[0]!.job.delivery_id))).toMatchObject({ status: 'cancelled', attempt_count: 0 });
  });

  test('our own faults throw, so the message is retried by SQS', async () => {
    const s = setup();
    await s.setTargets(['https://a.example/in']);
    await s.dispatcher.fanOut(await s.publisher.publish(s.scope, 'ping', {}));
    s.store.get = async () => {
      throw new Error('throttled');
    };
    await expect(s.dispatcher.runJob(s.sent[0]!.job)).rejects.toThrow('throttled');
  });
});

describe('WebhookService', () => {
  test('URLs are stored normalised, so one receiver cannot be listed twice', async () => {
    const s = setup();
    expect(await s.service.putTargetUrls(s.scope, ['HTTPS://Hooks.Example.COM:443/in', 'https://hooks.example.com/other?x=1'])).toEqual([
      'https://hooks.example.com/in',
      'https://hooks.example.com/other?x=1',
    ]);
    await expect(s.service.putTargetUrls(s.scope, ['https://hooks.example.com/in', 'https://HOOKS.example.com/in'])).rejects.toMatchObject({
      details: [{ path: 'urls.1', message: 'duplicate URL' }],
    });
    expect(await s.service.getTargetUrls(s.scope)).toEqual(['https://hooks.example.com/in', 'https://hooks.example.com/other?x=1']);
    // A trailing dot names the same host; an empty fragment is still a fragment.
    await expect(s.service.putTargetUrls(s.scope, ['https://hooks.example.com/in', 'https://hooks.example.com./in'])).rejects.toMatchObject({
      details: [{ path: 'urls.1', message: 'duplicate URL' }],
    });
    expect(await s.service.putTargetUrls(s.scope, ['https://hooks.example.com./in'])).toEqual(['https://hooks.example.com/in']);
    await expect(s.service.putTargetUrls(s.scope, ['https://hooks.example.com/in#'])).rejects.toMatchObject({
      details: [{ path: 'urls.0', message: 'must not have a fragment' }],
    });
  });

  test('a retrying delivery cannot be redelivered while its job is due, but can once it has stalled (job dead-lettered)', async () => {
    const s = setup([{ kind: 'response', status: 500 }]);
    const job = await s.firstJob(['https://a.example/in']);
    await s.dispatcher.runJob(job);
    s.sent.length = 0; // the retry job is lost to the DLQ
    await expect(s.service.redeliver(s.scope, job.delivery_id)).rejects.toMatchObject({ status: 409, code: 'delivery_in_progress' });
    s.advance(10_000 + STALLED_AFTER_MS);
    const again = await s.service.redeliver(s.scope, job.delivery_id);
    expect(again).toMatchObject({ status: 'pending', redelivery_of: job.delivery_id, url: 'https://a.example/in' });
    // Its first job was staged in the same transaction; the relay queues it.
    expect(s.sent).toEqual([]);
    expect(await s.relayStaged()).toBe(1);
    expect(s.sent.map((m) => m.job)).toEqual([{ v: 1, wallet_id: '7', delivery_id: again.delivery_id, attempt: 1 }]);
    // The original is closed: an operator's DLQ redrive of its lost job later sends nothing.
    expect(await s.service.getDelivery(s.scope, job.delivery_id)).toMatchObject({ status: 'failed', final_reason: `stalled; redelivered as ${again.delivery_id}` });
    const before = s.requests.length;
    await s.dispatcher.runJob({ ...job, attempt: 2 });
    expect(s.requests).toHaveLength(before);
  });

  test('every attempt is reported (metrics): outcome, verdict, exhausted retries, duration', async () => {
    const s = setup([{ kind: 'response', status: 503 }, { kind: 'timeout' }, { kind: 'response', status: 500 }]);
    let job = await s.firstJob(['https://a.example/in']);
    for (let i = 0; i < 3; i++, job = s.sent.shift()?.job as DeliveryJob) {
      s.advance(4000_000);
      await s.dispatcher.runJob(job);
    }
    expect(s.reports).toEqual([
      { outcome: 'http_error', verdict: 'retry', exhausted: false, durationMs: 5 },
      { outcome: 'timeout', verdict: 'retry', exhausted: false, durationMs: 5 },
      { outcome: 'http_error', verdict: 'retry', exhausted: true, durationMs: 5 },
    ]);
  });

  test('redelivery is one transaction: when closing the stalled original fails, no delivery and no job exist', async () => {
    const s = setup([{ kind: 'response', status: 500 }]);
    const job = await s.firstJob(['https://a.example/in']);
    await s.dispatcher.runJob(job);
    s.advance(10_000 + STALLED_AFTER_MS);
    // The worker records a late attempt between the redeliver's read and its write.
    const write = s.store.write.bind(s.store);
    s.store.write = async (ops) => {
      s.store.write = write;
      const item = (await s.store.get(keys.webhookDelivery(s.scope, job.delivery_id)))!;
      await write([{ type: 'put', item: { ...item, attempt_count: 2 } }]);
      return write(ops);
    };
    await expect(s.service.redeliver(s.scope, job.delivery_id)).rejects.toMatchObject({ status: 409, code: 'delivery_in_progress' });
    expect((await s.service.listDeliveries(s.scope, {})).map((d) => d.delivery_id)).toEqual([job.delivery_id]);
    expect(await s.relayStaged()).toBe(0);
  });

  test('a late copy of a 410 job does not disable a URL the tenant listed again since', async () => {
    const s = setup([{ kind: 'response', status: 410 }]);
    await s.service.putTargetUrls(s.scope, ['https://gone.example/in']);
    await s.dispatcher.fanOut(await s.publisher.publish(s.scope, 'ping', {}));
    const job = s.sent.shift()!.job;
    await s.dispatcher.runJob(job);
    expect((await s.settings.load(s.scope)).targets[0]).toMatchObject({ state: 'disabled' });
    s.advance(60_000);
    await s.service.putTargetUrls(s.scope, ['https://gone.example/in']); // "deliver here again"
    s.advance(60_000);
    await s.dispatcher.runJob(job); // SQS hands the old job over once more
    expect((await s.settings.load(s.scope)).targets[0]).toMatchObject({ state: 'active' });
  });
});

describe('signing secret rotation: the grace rule on both sides of previous_expires_at', () => {
  test('the rule itself: the previous generation signs strictly before its expiry, not at or after it', () => {
    const expires = new Date(T0 + 60_000);
    const s = { rev: 'r', targets: [], secret_generation: 2, previous_generation: 1, previous_expires_at: expires.toISOString() };
    expect(signingGenerations(s, new Date(T0))).toStrictEqual([2, 1]);
    expect(signingGenerations(s, new Date(T0 + 59_999))).toStrictEqual([2, 1]);
    expect(signingGenerations(s, expires)).toStrictEqual([2]);
    expect(signingGenerations(s, new Date(T0 + 60_001))).toStrictEqual([2]);
    expect(signingGenerations({ ...s, previous_expires_at: undefined }, new Date(T0))).toStrictEqual([2]);
    // An expiry without a previous generation signs with nothing else (never with an undefined generation).
    expect(signingGenerations({ ...s, previous_generation: undefined }, new Date(T0))).toStrictEqual([2]);
  });

  test('a delivery is signed by both secrets until the grace ends and by the new one only from then; the secret view follows', async () => {
    const s = setup();
    await s.setTargets(['https://a.example/in']);
    const before = await s.service.getSecret(s.scope);
    const rotated = await s.service.rotateSecret(s.scope, 60);
    expect(rotated).toEqual({ secret: expect.any(String), previous_secret: before.secret, previous_secret_expires_at: new Date(T0 + 60_000).toISOString() });

    /** The signatures on a fresh ping's request, each named by the secret (standardwebhooks' own signer) that made it. */
    const signersOfNextPing = async () => {
      const event = await s.publisher.publish(s.scope, 'ping', {});
      await s.dispatcher.fanOut(event);
      await s.dispatcher.runJob(s.sent.shift()!.job);
      const req = s.requests.at(-1)!;
      const at = new Date(Number(req.headers['webhook-timestamp']) * 1000);
      const name = new Map([rotated.secret, before.secret].map((secret, i) => [new Webhook(secret).sign(req.headers['webhook-id']!, at, req.body), i === 0 ? 'new' : 'old']));
      return req.headers['webhook-signature']!.split(' ').map((sig) => name.get(sig) ?? 'unknown');
    };

    s.advance(59_999);
    expect(await signersOfNextPing()).toEqual(['new', 'old']);
    expect(await s.service.getSecret(s.scope)).toEqual(rotated);
    s.advance(1);
    expect(await signersOfNextPing()).toEqual(['new']);
    expect(await s.service.getSecret(s.scope)).toEqual({ secret: rotated.secret });
  });
});

describe('SqsJobQueue', () => {
  const sqs = mockClient(SQSClient);
  beforeEach(() => sqs.reset());

  test('sends in batches of 10 with each message delay and group', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const q = new SqsJobQueue(new SQSClient({ region: 'eu-west-1' }), 'https://sqs/q');
    await q.send(Array.from({ length: 23 }, (_, i) => ({ body: `m${i}`, delaySeconds: i % 2 ? 900 : 0, group: `wallet-${i % 3}` })));
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries!);
    expect(calls.map((e) => e.length)).toEqual([10, 10, 3]);
    // The wallet is the message group: SQS fair queues balance tenants by it.
    expect(calls[0]![1]).toEqual({ Id: '1', MessageBody: 'm1', DelaySeconds: 900, MessageGroupId: 'wallet-1' });
  });

  test('a partially refused batch is an error (the caller fails its message and it is retried)', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false }] });
    const q = new SqsJobQueue(new SQSClient({ region: 'eu-west-1' }), 'https://sqs/q');
    await expect(q.send([{ body: 'x', delaySeconds: 0, group: 'wallet-1' }])).rejects.toThrow('InternalError');
  });
});
