import { queueDefinition } from '../../lib/service/resources';
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/receiver';
import { startTestApi, type TestApi } from '../helpers/runtime';

/**
 * Fairness between tenants on the shared webhook worker, end to end on the local runtime (receivers on
 * loopback). Tenant B has 10 targets that answer after 12 s (each attempt times out at the default
 * 10 s) and pings 3 times: 30 slow deliveries. Tenant A then pings its one prompt target. With one
 * batch at a time and no caps, A's ping waited 31 s behind B's backlog; with the caps it must arrive
 * within 5 s while B's deliveries wait on the queue, and B must never hold more than its caps. (The
 * slow-target circuit is shown in test/unit/webhook-fairness.test.ts, where its timing is exact.)
 *
 * The worker pool is shrunk from the deployed 20 instances to 3, so that B's 30 deliveries (three
 * batches) fill it the way a backlog of 200 fills the deployed one: without the caps, A would wait for
 * one of B's batches to time out (10 s).
 */
const WEBHOOK = queueDefinition('webhook');
const TENANT_CAP = WEBHOOK.fairness.perTenant;
const TARGETS = WEBHOOK.fairness.targets!;
const INSTANCES = 3;
const SLOW_ANSWER_MS = 12_000;

let api: TestApi;
let rx: Receiver;

beforeAll(async () => {
  [api, rx] = await Promise.all([startTestApi({ workerConcurrency: { webhook: INSTANCES } }), startReceiver()]);
});
afterAll(async () => {
  await Promise.all([api?.rt.stop(), rx?.close()]);
});

/** The most requests of `reqs` open at one moment (still-open ones count as open until now). */
function maxOpen(reqs: readonly ReceivedRequest[]): number {
  const edges = reqs.flatMap((r) => [
    [r.at, 1],
    [r.endedAt ?? Date.now(), -1],
  ]);
  // An end and a start at the same millisecond do not overlap.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (open += d!));
  return max;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("A's ping arrives within 5 s while B's 30 slow deliveries are queued; B never holds more than its caps", async () => {
  const [a, b] = await Promise.all([api.newWallet(), api.newWallet()]);
  const bPaths = Array.from({ length: 10 }, (_, i) => `/b-${i}`);
  for (const p of bPaths) rx.on(p, { status: 200, delayMs: SLOW_ANSWER_MS });
  const put = (key: string, urls: string[]) => api.call('PUT', '/api/v1/settings/webhook-target-urls', { key, body: { urls } });
  expect((await put(b.apiKey, bPaths.map((p) => `${rx.url}${p}`))).status).toBe(200);
  expect((await put(a.apiKey, [`${rx.url}/a`])).status).toBe(200);
  const ping = async (key: string) => expect((await api.call('POST', '/api/v1/settings/webhook-target-urls/ping', { key })).status).toBe(202);
  const ofB = () => rx.requests.filter((r) => r.path.startsWith('/b-'));

  const t0 = Date.now();
  for (let i = 0; i < 3; i++) await ping(b.apiKey);
  // B's backlog is being worked before A asks.
  while (ofB().length === 0) {
    if (Date.now() - t0 > 15_000) throw new Error("B's deliveries never started");
    await sleep(20);
  }
  const aSent = Date.now();
  await ping(a.apiKey);
  const [aGot] = await rx.waitFor('/a', 1, 15_000).catch(() => {
    throw new Error(`A's ping did not arrive within 15 s (B's requests so far: ${ofB().length})`);
  });
  const aLatency = aGot!.at - aSent;
  const bStarted = ofB().length;
  const bDeliveries = (await api.call('GET', '/api/v1/webhook-deliveries?limit=100', { key: b.apiKey })).body as { status: string; attempt_count: number }[];
  const bQueued = bDeliveries.filter((d) => d.status === 'pending' && d.attempt_count === 0).length;
  console.log(
    `A's ping arrived ${aLatency} ms after it was sent (B's first request came ${ofB()[0]!.at - t0} ms after B's pings); ` +
      `at that moment B had ${bStarted} requests started and ${bQueued} of its 30 deliveries not yet attempted`,
  );
  expect(aLatency).toBeLessThan(5000);
  expect(bDeliveries).toHaveLength(30);
  expect(bStarted).toBeLessThanOrEqual(TENANT_CAP);

  // Until the first wave has timed out and the deferred deliveries have come back for a while.
  for (;;) {
    const ended = ofB().filter((r) => r.endedAt !== undefined);
    if (ended.length > 0 && Date.now() - Math.min(...ended.map((r) => r.endedAt!)) > 2000) break;
    await sleep(100);
  }
  const all = ofB();
  const summary = {
    b_requests: all.length,
    b_max_open: maxOpen(all),
    b_max_open_per_target: Math.max(...bPaths.map((p) => maxOpen(all.filter((r) => r.path === p)))),
    seconds_observed: Math.round((Date.now() - t0) / 1000),
  };
  console.log(`B at the receiver: ${JSON.stringify(summary)} (caps: ${TENANT_CAP} per wallet, ${TARGETS.perTarget} per target)`);
  expect(summary.b_max_open).toBeLessThanOrEqual(TENANT_CAP);
  expect(summary.b_max_open_per_target).toBeLessThanOrEqual(TARGETS.perTarget);
  // A deferral is not an attempt: B's recorded attempts are the timed-out requests, nothing else.
  const attempts = ((await api.call('GET', '/api/v1/webhook-deliveries?limit=100', { key: b.apiKey })).body as { attempts: { outcome: string; duration_ms: number }[] }[]).flatMap((d) => d.attempts);
  expect(attempts.length).toBeGreaterThan(0);
  expect(attempts.length).toBeLessThanOrEqual(all.filter((r) => r.endedAt !== undefined).length);
  for (const attempt of attempts) expect(attempt).toMatchObject({ outcome: 'timeout', duration_ms: expect.any(Number) });
}, 90_000);
