import { InFlightLimiter } from '../../lib/fairness/in-flight';
import { FairShare, runBatchFairly, tenantMessageGroup } from '../../lib/fairness/share';
import { QUEUES, queueDefinition, type QueueFairness } from '../../lib/service/resources';
import { enqueueJobs, parseJob, type StatusJob } from '../../lib/status-lists/jobs';
import { keys, tenantScope } from '../../lib/store/keys';
import { sessionWallet } from '../../lib/store/session';
import type { JobQueue } from '../../lib/webhooks/records';
import { MemoryStore } from '../helpers/memory-store';

/** The shared-worker rule (lib/fairness/): caps on jobs in flight per wallet and per target, and deferral. */

const A = tenantScope('11');
const B = tenantScope('12');

function clock(start = Date.parse('2026-11-25T12:00:00Z')) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const holders = (item: Record<string, unknown> | undefined) => Object.keys(item ?? {}).filter((k) => k.startsWith('h_')).length;

describe('InFlightLimiter', () => {
  test('at most `cap` holders; a place given back is free again; the count is always the number of holders', async () => {
    const store = new MemoryStore();
    const limiter = new InFlightLimiter({ store, leaseMs: 60_000 });
    const slot = { key: keys.inFlight(A, 'q'), cap: 2 };
    const first = await limiter.acquire([slot]);
    const second = await limiter.acquire([slot]);
    expect(await limiter.acquire([slot])).toEqual({ full: 0 });
    if (!('lease' in first) || !('lease' in second)) throw new Error('expected two places');
    await limiter.release(first.lease);
    // Giving back twice frees one place only.
    await limiter.release(first.lease);
    const item = await store.get(slot.key);
    expect(item).toMatchObject({ n: 1 });
    expect(holders(item)).toBe(1);
    expect('lease' in (await limiter.acquire([slot]))).toBe(true);
    expect(await limiter.acquire([slot])).toEqual({ full: 0 });
  });

  test('a lease can take further places; refused, it keeps those it had', async () => {
    const store = new MemoryStore();
    const limiter = new InFlightLimiter({ store, leaseMs: 60_000 });
    const one = { key: keys.inFlight(A, 'one'), cap: 1 };
    const two = { key: keys.inFlight(A, 'two'), cap: 1 };
    const first = await limiter.acquire([one]);
    if (!('lease' in first)) throw new Error('expected a place');
    const more = await limiter.acquire([two], first.lease);
    expect(more).toEqual({ lease: { token: first.lease.token, keys: [one.key, two.key] } });
    expect(await limiter.acquire([two], first.lease)).toEqual({ full: 0 });
    expect(await store.get(one.key)).toMatchObject({ n: 1 });
    if (!('lease' in more)) throw new Error('expected places');
    await limiter.release(more.lease);
    expect([(await store.get(one.key))!.n, (await store.get(two.key))!.n]).toEqual([0, 0]);
  });

  test('when a later slot is full, the places taken before it are given back', async () => {
    const store = new MemoryStore();
    const limiter = new InFlightLimiter({ store, leaseMs: 60_000 });
    const wide = { key: keys.inFlight(A, 'wide'), cap: 5 };
    const narrow = { key: keys.inFlight(A, 'narrow'), cap: 1 };
    expect('lease' in (await limiter.acquire([narrow]))).toBe(true);
    expect(await limiter.acquire([wide, narrow])).toEqual({ full: 1 });
    expect(await store.get(wide.key)).toMatchObject({ n: 0 });
  });

  test("a holder that died keeps its place only until its lease ends (and a quarter lease at most); its late give-back does not free another's", async () => {
    const store = new MemoryStore();
    const c = clock();
    const limiter = new InFlightLimiter({ store, leaseMs: 60_000, now: c.now });
    const slot = { key: keys.inFlight(A, 'q'), cap: 1 };
    const dead = await limiter.acquire([slot]);
    c.advance(59_000);
    expect(await limiter.acquire([slot])).toEqual({ full: 0 });
    // Expired now, but this instance looked a moment ago: a refusal costs one write until a quarter lease has passed.
    c.advance(2_000);
    let reads = 0;
    const get = store.get.bind(store);
    store.get = async (...args) => (reads++, get(...args));
    expect(await limiter.acquire([slot])).toEqual({ full: 0 });
    expect(reads).toBe(0);
    c.advance(13_000);
    const next = await limiter.acquire([slot]);
    expect('lease' in next).toBe(true);
    if (!('lease' in dead)) throw new Error('expected a place');
    await limiter.release(dead.lease);
    expect(await store.get(slot.key)).toMatchObject({ n: 1 });
    expect(await limiter.acquire([slot])).toEqual({ full: 0 });
  });

  test('counters are per wallet', async () => {
    const store = new MemoryStore();
    const limiter = new InFlightLimiter({ store, leaseMs: 60_000 });
    expect('lease' in (await limiter.acquire([{ key: keys.inFlight(A, 'q'), cap: 1 }]))).toBe(true);
    expect('lease' in (await limiter.acquire([{ key: keys.inFlight(B, 'q'), cap: 1 }]))).toBe(true);
    expect(keys.inFlight(A, 'q').PK).toBe('W#11#INFLIGHT');
  });
});

const WITH_TARGETS: QueueFairness = {
  perTenant: 3,
  leaseSeconds: 60,
  defer: { firstSeconds: 2, maxSeconds: 60 },
  targets: { perTarget: 2, slow: { afterMs: 5000, forSeconds: 60, perTarget: 1, perTenant: 2 } },
};

describe('FairShare', () => {
  test('a target that answered slowly, or not at all, is slow for a while: one job at a time to it; a prompt answer ends it', async () => {
    const c = clock();
    const share = new FairShare({ store: new MemoryStore(), name: 'q', fairness: WITH_TARGETS, now: c.now });
    const pass = async (target: string) => {
      const a = await share.admitTo(A, target);
      if (!('pass' in a)) throw new Error(`refused: ${a.refused}`);
      return a.pass;
    };
    // Healthy: two at once.
    const p1 = await pass('https://t1');
    const p2 = await pass('https://t1');
    expect(await share.admitTo(A, 'https://t1')).toEqual({ refused: 'target' });
    await share.release(p2, { durationMs: 200, timedOut: false });
    await share.release(p1, { durationMs: 10_000, timedOut: true });
    // Slow now: one at a time.
    const probe = await pass('https://t1');
    expect(probe.slow).toBe(true);
    expect(await share.admitTo(A, 'https://t1')).toEqual({ refused: 'slow_target' });
    // A prompt answer closes the circuit.
    await share.release(probe, { durationMs: 300, timedOut: false });
    expect((await pass('https://t1')).slow).toBe(false);
    expect((await pass('https://t1')).slow).toBe(false);
  });

  test("slow targets: one at a time each, and the wallet's slow targets together at most slow.perTenant", async () => {
    const c = clock();
    const share = new FairShare({ store: new MemoryStore(), name: 'q', fairness: WITH_TARGETS, now: c.now });
    const admit = (t: string) => share.admitTo(A, t);
    for (const t of ['https://t1', 'https://t2', 'https://t3']) {
      const a = await admit(t);
      if (!('pass' in a)) throw new Error('expected a place');
      await share.release(a.pass, { durationMs: 6000, timedOut: false }); // slower than slow.afterMs
    }
    const first = await admit('https://t1');
    expect(first).toMatchObject({ pass: { slow: true } });
    expect(await admit('https://t1')).toEqual({ refused: 'slow_target' });
    expect(await admit('https://t2')).toMatchObject({ pass: { slow: true } });
    expect(await admit('https://t3')).toEqual({ refused: 'slow_targets' });
    // A healthy target of the same wallet still gets the wallet's last place.
    expect(await admit('https://t4')).toMatchObject({ pass: { slow: false } });
    expect(await admit('https://t5')).toEqual({ refused: 'tenant' });
    // Another wallet is not touched by any of it.
    expect(await share.admitTo(B, 'https://t1')).toMatchObject({ pass: { slow: false } });
    // The circuit closes by itself after slow.forSeconds.
    if (!('pass' in first)) throw new Error('expected a place');
    await share.release(first.pass);
    c.advance(61_000);
    expect(await admit('https://t3')).toMatchObject({ pass: { slow: false } });
  });

  test('run holds a place for the work and gives it back, also when the work throws; refused when the wallet is full', async () => {
    const store = new MemoryStore();
    const share = new FairShare({ store, name: 'q', fairness: { ...WITH_TARGETS, perTenant: 1 } });
    await expect(share.run(A, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const held = share.run(A, () => new Promise<string>((r) => setTimeout(() => r('done'), 20)));
    expect(await share.run(A, async () => 'never')).toEqual({ refused: 'tenant' });
    expect(await held).toEqual({ value: 'done' });
    expect(await store.get(keys.inFlight(A, 'q'))).toMatchObject({ n: 0 });
  });

  test('deferrals wait longer each time, up to the maximum, with jitter', () => {
    const share = new FairShare({ store: new MemoryStore(), name: 'q', fairness: WITH_TARGETS });
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 30].map((n) => share.deferSeconds(n, mid))).toEqual([2, 4, 8, 16, 32, 60, 60, 60]);
    expect(share.deferSeconds(0, () => 0)).toBe(2); // 1.5 rounds up
    expect(share.deferSeconds(5, () => 0.999)).toBe(75);
  });
});

describe('runBatchFairly', () => {
  const fairness: QueueFairness = { perTenant: 1, leaseSeconds: 90, defer: { firstSeconds: 5, maxSeconds: 60 } };

  test("one wallet's items run one after another in its session holding one place; a wallet at its cap has its items deferred", async () => {
    const store = new MemoryStore();
    const share = new FairShare({ store, name: 'q', fairness });
    // Another instance already works for wallet 12.
    const busy = await share.admit(B);
    expect('pass' in busy).toBe(true);
    const ran: string[] = [];
    const deferred: string[][] = [];
    const items = ['11:a', '12:x', '11:b', '13:m', '11:c'];
    const out = await runBatchFairly(share, items, {
      walletOf: (i) => i.split(':')[0]!,
      run: async (i) => {
        ran.push(`${i}@${sessionWallet()}`);
        if (i === '11:b') throw new Error('SES down');
      },
      defer: async (group, refusal) => void deferred.push([...group, refusal]),
    });
    expect(ran).toEqual(['11:a@11', '11:b@11', '11:c@11', '13:m@13']);
    expect(deferred).toEqual([['12:x', 'tenant']]);
    expect(out).toEqual({ failed: ['11:b'], deferred: ['12:x'] });
    expect(await store.get(keys.inFlight(A, 'q'))).toMatchObject({ n: 0 });
  });

  test('items that could not be deferred, or whose counter could not be reached, fail (SQS hands them over again)', async () => {
    const store = new MemoryStore();
    const share = new FairShare({ store, name: 'q', fairness });
    await share.admit(A);
    const out = await runBatchFairly(share, ['11:a', '12:b'], {
      walletOf: (i) => i.split(':')[0]!,
      run: async () => {
        store.write = async () => {
          throw new Error('throttled');
        };
      },
      defer: async () => {
        throw new Error('SQS down');
      },
    });
    // 11:a could not be deferred; 12:b ran (and broke the store: its give-back failed quietly, the lease frees it).
    expect(out).toEqual({ failed: ['11:a'], deferred: [] });
    // With the store broken, no place can be taken: nothing runs, all fail.
    const again = await runBatchFairly(share, ['13:c'], { walletOf: (i) => i.split(':')[0]!, run: async () => undefined, defer: async () => undefined });
    expect(again).toEqual({ failed: ['13:c'], deferred: [] });
  });
});

describe('the declaration (QUEUES[].fairness)', () => {
  test.each(QUEUES.map((q) => [q.id, q] as const))('%s: one wallet can never take the whole worker, and a dead holder frees its place', (_id, q) => {
    const f = q.fairness;
    expect(f.perTenant).toBeGreaterThanOrEqual(1);
    // Each place may hold an instance: another wallet always finds one free.
    expect(f.perTenant).toBeLessThan(q.consumer.maxConcurrency);
    // Longer than the worker may run (its timeout is a sixth of the visibility timeout), shorter than the visibility timeout.
    expect(f.leaseSeconds).toBeGreaterThan(q.visibilityTimeoutSeconds / 6);
    expect(f.leaseSeconds).toBeLessThan(q.visibilityTimeoutSeconds);
    expect(f.defer.firstSeconds).toBeGreaterThanOrEqual(1);
    expect(f.defer.maxSeconds * 1.25).toBeLessThanOrEqual(900); // SQS's longest delay
    if (f.targets) {
      expect(f.targets.perTarget).toBeLessThanOrEqual(f.perTenant);
      expect(f.targets.slow.perTarget).toBeLessThanOrEqual(f.targets.perTarget);
      expect(f.targets.slow.perTenant).toBeLessThan(f.perTenant);
    }
  });
});

describe('status jobs', () => {
  test("queued and deferred in their wallet's message group; the deferral counted", async () => {
    const sent: { body: string; delaySeconds: number; group: string }[] = [];
    const queue: JobQueue = { send: async (m) => void sent.push(...m) };
    const job: StatusJob = { kind: 'publish', wallet_id: '7', definition_id: 'd1', list: 0 };
    await enqueueJobs(queue, [job]);
    const fairness = queueDefinition('status').fairness;
    const share = new FairShare({ store: new MemoryStore(), name: 'status', fairness });
    // Deferred twice (the second time from the requeued body): each deferral counted, the delay doubling.
    const [first] = await share.requeue(queue, [job], () => 0.5);
    const [second] = await share.requeue(queue, [parseJob(sent.at(-1)!.body)], () => 0.5);
    expect([first, second]).toEqual([
      { deferrals: 1, delay_seconds: fairness.defer.firstSeconds },
      { deferrals: 2, delay_seconds: Math.min(fairness.defer.maxSeconds, 2 * fairness.defer.firstSeconds) },
    ]);
    expect(sent.map((m) => [m.group, m.delaySeconds, parseJob(m.body).deferrals])).toEqual([
      [tenantMessageGroup('7'), 1, undefined],
      ['wallet-7', first!.delay_seconds, 1],
      ['wallet-7', second!.delay_seconds, 2],
    ]);
    expect(() => parseJob(JSON.stringify({ ...job, deferrals: -1 }))).toThrow('not a status-list job');
  });
});
