/**
 * Part of `npm run bench` (see run.ts; `BENCH_ONLY=webhook-latency`): how long one webhook event takes
 * to arrive, per event, through the whole local path (API ping -> outbox -> stream relay -> SQS
 * emulator -> worker -> receiver on loopback). webhooks.ts times only the last of a run of pings;
 * this times every one, from the moment the API answered 202 to `POST
 * /api/v1/settings/webhook-target-urls/ping` (the answer names the event) until the receiver got the
 * delivery whose `webhook-id` (and body `id`) is that event.
 *
 * 1. Idle: one ping at a time, each sent after the previous one arrived plus a random pause of
 *    0 to BENCH_WHL_PAUSE_MS, so the pollers are in whatever state they fall into when idle.
 * 2. Steady load: pings at a fixed rate, open loop (one does not wait for the previous), from several
 *    wallets in turn, each with its own target path.
 *
 * Before timing, every wallet's first ping is delivered (the stream relay has read past the setup's
 * events) and the receiver has been quiet for 2 s. An event not delivered within the deadline, a ping
 * not answered 202, or a delivery on another wallet's path fails the bench.
 *
 * Knobs: BENCH_WHL_IDLE (events in the idle row, 100), BENCH_WHL_PAUSE_MS (1000),
 * BENCH_WHL_LOAD (events in the load row, 400), BENCH_WHL_RATE (pings per second, 20),
 * BENCH_WHL_WALLETS (5), BENCH_WHL_DEADLINE_S (per event, 60).
 * Also runs unchanged at 06e35c0^1 (before the stream poller paused after a partial read and the relay
 * read webhook settings once per batch), copied into a worktree of that commit, for a before/after.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { runBench, startBenchRuntime } from './harness';
import { percentile, loadAverage } from './stats';

const IDLE = Number(process.env.BENCH_WHL_IDLE ?? 100);
const PAUSE_MS = Number(process.env.BENCH_WHL_PAUSE_MS ?? 1000);
const LOAD = Number(process.env.BENCH_WHL_LOAD ?? 400);
const RATE = Number(process.env.BENCH_WHL_RATE ?? 20);
const WALLETS = Number(process.env.BENCH_WHL_WALLETS ?? 5);
const DEADLINE_MS = Number(process.env.BENCH_WHL_DEADLINE_S ?? 60) * 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sent {
  readonly id: string;
  readonly path: string;
  /** Date.now() when the 202 arrived: the receiver stamps deliveries with Date.now() too. */
  readonly answeredAt: number;
  /** The ping's own round trip, ms. */
  readonly pingMs: number;
}

/** The first delivery of each event id the receiver has got, indexed as requests come in. */
function arrivals(rx: Receiver) {
  const first = new Map<string, { at: number; path: string }>();
  let scanned = 0;
  const sweep = () => {
    for (; scanned < rx.requests.length; scanned++) {
      const r = rx.requests[scanned]!;
      const id = r.headers['webhook-id'];
      if (typeof id !== 'string') throw new Error(`a delivery on ${r.path} without a webhook-id header`);
      const bodyId = (JSON.parse(r.body) as { id?: unknown }).id;
      if (bodyId !== id) throw new Error(`delivery ${id}: the body names event ${String(bodyId)}`);
      if (!first.has(id)) first.set(id, { at: r.at, path: r.path });
    }
  };
  /** Resolves when every event in `events` has arrived on its own path; throws on the first one past the deadline. */
  const wait = async (events: readonly Sent[]) => {
    for (;;) {
      sweep();
      let pending = 0;
      for (const e of events) {
        const a = first.get(e.id);
        if (a && a.path !== e.path) throw new Error(`event ${e.id} was delivered on ${a.path}, its wallet's target is ${e.path}`);
        if (a) continue;
        if (Date.now() - e.answeredAt > DEADLINE_MS) throw new Error(`event ${e.id} (${e.path}) not delivered within ${DEADLINE_MS / 1000} s of its 202`);
        pending++;
      }
      if (pending === 0) return events.map((e) => first.get(e.id)!.at - e.answeredAt);
      await sleep(5);
    }
  };
  return { wait };
}

async function main() {
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const { rt, call, newWallet } = await startBenchRuntime();
  const rx = await startReceiver();
  const wallets: { key: string; path: string }[] = [];
  for (let k = 0; k < WALLETS; k++) {
    const w = await newWallet(`whl-${k}`);
    const path = `/whl-${k}`;
    await call('PUT', '/api/v1/settings/webhook-target-urls', w.key, { urls: [`${rx.url}${path}`] });
    wallets.push({ key: w.key, path });
  }

  const ping = async (w: { key: string; path: string }): Promise<Sent> => {
    const t0 = performance.now();
    const res = await fetch(`${rt.url}/api/v1/settings/webhook-target-urls/ping`, { method: 'POST', headers: { 'x-api-key': w.key } });
    const answeredAt = Date.now();
    const pingMs = performance.now() - t0;
    const body = (await res.json()) as { event?: { id?: unknown } };
    if (res.status !== 202 || typeof body.event?.id !== 'string') throw new Error(`ping: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return { id: body.event.id, path: w.path, answeredAt, pingMs };
  };
  const { wait } = arrivals(rx);

  // Caught up: every wallet's first ping delivered (after the setup's own events), then 2 s of quiet.
  await wait(await Promise.all(wallets.map(ping)));
  for (let last = -1; last !== rx.requests.length; ) {
    last = rx.requests.length;
    await sleep(2000);
  }

  console.log(`\n### Webhook delivery latency per event: 202 to POST …/webhook-target-urls/ping -> the receiver has the delivery (commit ${commit})`);
  console.log(`load average at start: ${loadAverage()}\n`);
  const rows: string[] = [];
  const row = (label: string, sent: readonly Sent[], latencies: readonly number[]) => {
    const p = (xs: readonly number[], q: number) => percentile(xs, q).toFixed(0);
    const pingMs = sent.map((s) => s.pingMs);
    rows.push(`| ${label} | ${latencies.length} | ${p(latencies, 50)} | ${p(latencies, 95)} | ${p(latencies, 99)} | ${Math.max(...latencies).toFixed(0)} | ${p(pingMs, 50)} / ${p(pingMs, 99)} |`);
  };

  // 1. Idle: one at a time, a random pause between an arrival and the next ping.
  const idleSent: Sent[] = [];
  const idleLatency: number[] = [];
  for (let i = 0; i < IDLE; i++) {
    await sleep(Math.random() * PAUSE_MS);
    const s = await ping(wallets[i % wallets.length]!);
    idleSent.push(s);
    idleLatency.push(...(await wait([s])));
  }
  row(`idle: one at a time, 0–${PAUSE_MS} ms random pause after each arrival`, idleSent, idleLatency);

  // 2. Steady load: open loop at RATE/s, the wallets in turn; each ping is due at its slot whatever the others do.
  const loadPings: Promise<Sent>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < LOAD; i++) {
    const due = t0 + (i * 1000) / RATE;
    const now = performance.now();
    if (due > now) await sleep(due - now);
    loadPings.push(ping(wallets[i % wallets.length]!));
  }
  const sendSecs = (performance.now() - t0) / 1000;
  const loadSent = await Promise.all(loadPings);
  const loadLatency = await wait(loadSent);
  const achieved = LOAD > 1 ? ` (sent at ${((LOAD - 1) / sendSecs).toFixed(1)}/s)` : '';
  row(`steady load: ${RATE}/s${achieved}, ${wallets.length} wallets in turn`, loadSent, loadLatency);

  console.log('| phase | events | p50 ms | p95 ms | p99 ms | max ms | ping answered (202), p50 / p99 ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(`\nload average at end: ${loadAverage()}`);
  await Promise.all([rt.stop(), rx.close()]);
}

runBench(main);
