import { OutboxPublisher } from '../../lib/events/publisher';
import { FairShare, type Refusal } from '../../lib/fairness/share';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { queueDefinition } from '../../lib/service/resources';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import { WebhookDispatcher } from '../../lib/webhooks/dispatcher';
import { WebhookSettingsRepo, type DeliveryJob, type JobQueue } from '../../lib/webhooks/records';
import type { WebhookRequest, WebhookResult } from '../../lib/webhooks/transport';
import { MemoryStore } from '../helpers/memory-store';

/**
 * The webhook worker's share rule: an attempt runs only under its wallet's and its target's caps (the
 * deployed numbers, lib/service/resources.ts), a job over a cap goes back to the queue delayed without
 * touching its delivery record, and a slow target is tried one attempt at a time.
 */
const T0 = Date.parse('2026-11-25T12:00:00Z');
const F = queueDefinition('webhook').fairness;
const SLOW = F.targets!.slow;

function setup() {
  let now = T0;
  const clock = () => new Date(now);
  const store = new MemoryStore();
  const sent: { job: DeliveryJob; delaySeconds: number; group: string }[] = [];
  const queue: JobQueue = { send: async (m) => void sent.push(...m.map((x) => ({ job: JSON.parse(x.body) as DeliveryJob, delaySeconds: x.delaySeconds, group: x.group }))) };
  /** Requests under way: each waits until the test answers it. */
  const open: { req: WebhookRequest; answer: (r: WebhookResult) => void }[] = [];
  const deferrals: Refusal[] = [];
  const dispatcher = new WebhookDispatcher({
    store,
    secrets: new LocalSecretDeriver('cd'.repeat(32)),
    queue,
    transport: { post: (req) => new Promise((answer) => open.push({ req, answer })) },
    retryDelaysSeconds: [15, 45],
    timeoutMs: 10_000,
    now: clock,
    random: () => 0.5,
    fairness: new FairShare({ store, name: 'webhook', fairness: F, now: () => now }),
    onDeferral: (r) => deferrals.push(r),
  });
  const publisher = new OutboxPublisher(store, clock);
  const settings = new WebhookSettingsRepo(store, clock);
  /** `targets` of the wallet, one ping fanned out to them; returns the first jobs, taken off the queue. */
  const pingJobs = async (scope: TenantScope, targets: string[]) => {
    await settings.mutate(scope, (s) => ({ ...s, targets: targets.map((url) => ({ url, state: 'active' as const, added_at: new Date(T0 - 1000).toISOString() })) }));
    await dispatcher.fanOut(await publisher.publish(scope, 'ping', {}));
    return sent.splice(0).map((m) => m.job);
  };
  /** Starts jobs without waiting for their requests; resolves once each has either a request open or is done. */
  const start = async (jobs: DeliveryJob[]) => {
    const before = open.length + sent.length;
    const runs = jobs.map((j) => dispatcher.runJob(j));
    const settledOrOpen = Promise.race([Promise.all(runs), new Promise((r) => setTimeout(r, 50))]);
    await settledOrOpen;
    return { runs, started: open.length + sent.length - before };
  };
  const answer = (i: number, result: WebhookResult) => open.splice(i, 1)[0]!.answer(result);
  return { store, sent, open, deferrals, dispatcher, pingJobs, start, answer, advance: (ms: number) => (now += ms), now: () => now };
}

const ok = (durationMs = 100): WebhookResult => ({ outcome: { kind: 'response', status: 200 }, durationMs });
const timeout: WebhookResult = { outcome: { kind: 'timeout' }, durationMs: 10_000 };

test("a wallet's attempts beyond its cap go back to the queue, delayed, and their deliveries stay untouched", async () => {
  const s = setup();
  const b = tenantScope('2');
  const targets = Array.from({ length: 10 }, (_, i) => `https://b${i}.example/in`);
  const jobs = await s.pingJobs(b, targets);
  const { runs } = await s.start(jobs);
  expect(s.open).toHaveLength(F.perTenant);
  const back = s.sent.splice(0);
  expect(back).toHaveLength(10 - F.perTenant);
  for (const m of back) {
    expect(m.job).toMatchObject({ wallet_id: '2', attempt: 1, deferrals: 1 });
    expect(m.group).toBe('wallet-2');
    expect(m.delaySeconds).toBe(F.defer.firstSeconds);
    // Not an attempt: the record is as the relay made it.
    expect(await s.store.get(keys.webhookDelivery(b, m.job.delivery_id))).toMatchObject({ status: 'pending', attempt_count: 0, attempts: [] });
  }
  expect(s.deferrals).toEqual(Array(10 - F.perTenant).fill('tenant'));

  // Another wallet is not held up by B's cap.
  const [aJob] = await s.pingJobs(tenantScope('1'), ['https://a.example/in']);
  void s.dispatcher.runJob(aJob!);
  await new Promise((r) => setTimeout(r, 20));
  expect(s.open.map((o) => o.req.url)).toContain('https://a.example/in');

  // Deferred again, it waits twice as long.
  const again = await s.start([back[0]!.job]);
  expect(again.started).toBe(1);
  expect(s.sent.splice(0)).toEqual([{ job: { ...back[0]!.job, deferrals: 2 }, delaySeconds: F.defer.firstSeconds * 2, group: 'wallet-2' }]);

  // Once B's attempts answer, its deferred jobs run; the attempt is attempt 1, and the retry schedule is unchanged.
  while (s.open.length) s.answer(0, ok());
  await Promise.all(runs);
  s.advance(60_000);
  const late = s.start([back[1]!.job]);
  await late;
  s.answer(0, { outcome: { kind: 'response', status: 500 }, durationMs: 100 });
  await Promise.all((await late).runs);
  const d = await s.store.get(keys.webhookDelivery(b, back[1]!.job.delivery_id));
  expect(d).toMatchObject({ status: 'retrying', attempt_count: 1, attempts: [{ attempt: 1, outcome: 'http_error', at: new Date(s.now()).toISOString() }] });
  expect(s.sent.splice(0)).toEqual([{ job: { v: 1, wallet_id: '2', delivery_id: back[1]!.job.delivery_id, attempt: 2, not_before: s.now() + 15_000 }, delaySeconds: 15, group: 'wallet-2' }]);
});

test('one target gets at most perTarget attempts at once; after it timed out, one at a time, until it answers promptly', async () => {
  const s = setup();
  const w = tenantScope('3');
  const url = 'https://slow.example/in';
  const jobs: DeliveryJob[] = [];
  for (let i = 0; i < 4; i++) jobs.push(...(await s.pingJobs(w, [url])));
  const first = await s.start(jobs);
  expect(s.open).toHaveLength(F.targets!.perTarget);
  expect(s.deferrals).toEqual(Array(4 - F.targets!.perTarget).fill('target'));
  const waiting = s.sent.splice(0).map((m) => m.job);

  // They time out: the target is slow now.
  while (s.open.length) s.answer(0, timeout);
  await Promise.all(first.runs);
  s.sent.splice(0); // their retries
  s.deferrals.length = 0;
  const second = await s.start(waiting);
  expect(s.open).toHaveLength(SLOW.perTarget);
  expect(s.deferrals).toEqual(Array(waiting.length - SLOW.perTarget).fill('slow_target'));
  const still = s.sent.splice(0).map((m) => m.job);

  // The probe answers promptly: the circuit closes and the rest run together.
  s.answer(0, ok(300));
  await Promise.all(second.runs);
  s.deferrals.length = 0;
  const third = await s.start(still);
  expect(s.open).toHaveLength(Math.min(still.length, F.targets!.perTarget));
  expect(s.deferrals).toEqual([]);
  while (s.open.length) s.answer(0, ok());
  await Promise.all(third.runs);
});

test("a wallet's slow targets together hold at most slow.perTenant attempts; its healthy targets keep the rest of its share", async () => {
  const s = setup();
  const w = tenantScope('4');
  const slowTargets = Array.from({ length: 4 }, (_, i) => `https://slow${i}.example/in`);
  // Each slow target timed out once.
  const wave = await s.start(await s.pingJobs(w, slowTargets));
  expect(wave.started).toBe(4);
  while (s.open.length) s.answer(0, timeout);
  await Promise.all(wave.runs);
  s.sent.splice(0);
  s.advance(1000);

  const healthy = 'https://fine.example/in';
  const jobs = await s.pingJobs(w, [...slowTargets, healthy]);
  const run = await s.start(jobs);
  const urls = s.open.map((o) => o.req.url);
  expect(urls.filter((u) => u !== healthy)).toHaveLength(SLOW.perTenant);
  expect(urls).toContain(healthy);
  expect(s.deferrals.filter((r) => r === 'slow_targets')).toHaveLength(slowTargets.length - SLOW.perTenant);
  while (s.open.length) s.answer(0, ok());
  await Promise.all(run.runs);
});

test('a duplicate of a finished job takes no place and is not deferred', async () => {
  const s = setup();
  const w = tenantScope('5');
  const [job] = await s.pingJobs(w, ['https://x.example/in']);
  const run = await s.start([job!]);
  s.answer(0, ok());
  await Promise.all(run.runs);
  await s.dispatcher.runJob(job!); // a duplicate
  expect(s.open).toHaveLength(0);
  expect(s.sent).toHaveLength(0);
  expect(await s.store.get(keys.inFlight(w, 'webhook'))).toMatchObject({ n: 0 });
});
