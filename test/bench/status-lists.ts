/**
 * Part of `npm run bench` (see run.ts): status lists through the local runtime, for docs/benchmarks.md.
 *
 * 1. Allocation under 50 concurrent issuances: the allocator alone against DynamoDB Local, and whole
 *    issuance flows (spec wallet over HTTP) for a configuration bound to a definition and one not.
 * 2. How long a revocation takes to reach the published list (PATCH's 200 → a verifier polling the
 *    public IETF list every 25 ms sees it), one at a time and as a burst of 100, and how many
 *    signatures the burst cost (its `status_list.published` outbox events).
 * 3. Fetching a published 131,072-entry list with 1 % set: sequential, under autocannon, and 304s.
 */
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getListFromStatusListJWT, getStatusListFromJWT } from '@sd-jwt/jwt-status-list';
import { decodeJwt } from 'jose';
import { LOCAL_TABLE_NAME } from '../../infra/local/runtime';
import { runBench, startBenchRuntime } from './harness';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { OutboxPublisher } from '../../lib/events/publisher';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { issuableConfiguration, supportedFromItem } from '../../lib/oid4vci/supported';
import { PUBLISH_DELAY_SECONDS } from '../../lib/status-lists/jobs';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { statusAttribute, statusKeys } from '../../lib/status-lists/records';
import { tenantScope } from '../../lib/store/keys';
import type { WriteOp } from '../../lib/store/port';
import { SpecWallet } from '../helpers/spec-wallet';
import { decodeBitstringStatusList } from '../helpers/w3c-bitstring-status-list';

const run = promisify(execFile);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = 50;
const ALLOCATIONS = Number(process.env.BENCH_SL_ALLOCATIONS ?? 5000);
const FLOWS = Number(process.env.BENCH_SL_FLOWS ?? 1000);
const SINGLES = Number(process.env.BENCH_SL_SINGLES ?? 20);
const BURST = Number(process.env.BENCH_SL_BURST ?? 100);
const FETCHES = Number(process.env.BENCH_SL_FETCHES ?? 500);
const POLL_MS = 25;
const LIST_SIZE = 131_072;

const SUBJECT = { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' };
const CLAIMS = { given_name: { mandatory: true }, family_name: { mandatory: true }, birthdate: {} };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: pct(s, 50), p95: pct(s, 95), p99: pct(s, 99), max: s[s.length - 1]! };
};
const f1 = (x: number) => x.toFixed(1);

interface Cannon {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  statusCodeStats: Record<string, { count: number }>;
}

async function cannon(url: string, headers: Record<string, string>): Promise<Cannon> {
  const args = ['node_modules/autocannon/autocannon.js', '-j', '-c', '10', '-d', String(DURATION_S)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const { stdout } = await run(process.execPath, [...args, url], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Cannon;
}

/** Waits until this process (service, relay, pollers, emulated SQS) uses under 15 % of a core over 500 ms; returns the seconds waited. */
async function settle(maxMs = 30_000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const u0 = process.cpuUsage();
    const w0 = performance.now();
    await sleep(500);
    const u = process.cpuUsage(u0);
    if ((u.user + u.system) / 1000 / (performance.now() - w0) < 0.15 || performance.now() - t0 > maxMs) return (performance.now() - t0) / 1000;
  }
}

/** Runs `count` tasks on `workers` concurrent callers; returns each task's time and the wall time. */
async function concurrently(count: number, workers: number, task: (i: number) => Promise<void>) {
  const times: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t = performance.now();
        await task(i);
        times.push(performance.now() - t);
      }
    }),
  );
  return { times, seconds: (performance.now() - t0) / 1000 };
}

async function main() {
  const { rt, call, newWallet } = await startBenchRuntime();
  const { key, walletId } = await newWallet('bench-status');
  const did = (await call('POST', '/api/v1/create-did', key, { method: 'key' })).did.did as string;
  const config = async (id: string) => (await call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', key, { id, vct: `https://example.com/${id}`, claims: CLAIMS, sd_list: ['/given_name'] })).supported_cred_id as string;
  const bound = await config('Identity_Status');
  const unbound = await config('Identity_Plain');
  const allocOnly = await config('Identity_Alloc');
  const boundDef = await call('POST', '/api/v1/status-list/defs', key, { supported_cred_id: bound, issuer_did: did });
  const allocDef = await call('POST', '/api/v1/status-list/defs', key, { supported_cred_id: allocOnly, issuer_did: did });

  const ddbClient = new DynamoDBClient({ endpoint: rt.endpoints.dynamodb, maxAttempts: 10 });
  const ddb = DynamoDBDocumentClient.from(ddbClient);
  const store = new DynamoDbStore(() => ddbClient, LOCAL_TABLE_NAME);
  const scope = tenantScope(walletId);

  // 1a. The allocator alone: one binding query and one counter increment per call (its ops go into the issuing transaction, not run here).
  const allocator = new StatusAllocator({ store, events: new OutboxPublisher(store), refs: new PublicRefs(store) });
  const allocConfig = issuableConfiguration(supportedFromItem((await store.get(oid4vciKeys.supported(scope, allocOnly)))!));
  for (let i = 0; i < 200; i++) await allocator.allocate(scope, allocConfig, `warm-${i}`, 1, did);
  await settle();
  const alloc = await concurrently(ALLOCATIONS, CONCURRENCY, async (i) => {
    const got = await allocator.allocate(scope, allocConfig, `bench-${i}`, 1, did);
    if (!got.claims[0]?.sdJwt) throw new Error('allocation without a status claim');
  });
  const [allocDetail] = await call('GET', `/api/v1/status-list/defs/${allocDef.id}`, key);
  if (allocDetail.entries_assigned !== ALLOCATIONS + 200) throw new Error(`counter at ${allocDetail.entries_assigned}, expected ${ALLOCATIONS + 200}`);
  const a = summary(alloc.times);
  console.log('\n### Status lists: allocations under 50 concurrent callers, local runtime\n');
  console.log(`\`StatusAllocator.allocate(scope, config, exchange, 1)\` in the bench's process against DynamoDB Local, ${CONCURRENCY} concurrent callers, ${ALLOCATIONS} calls on one definition: a strongly consistent binding query and one atomic counter add each (the entry's writes join the issuing transaction and are not part of this).\n`);
  console.log('| | calls | allocations/s | p50 ms | p99 ms |');
  console.log('|---|---|---|---|---|');
  console.log(`| allocator alone | ${alloc.times.length} | ${(alloc.times.length / alloc.seconds).toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} |`);

  // 1b. Whole issuance flows, bound and unbound, in ABBA rounds so drift (table growth, relay backlog) falls on both alike.
  const offer = async (cfg: string) => {
    const o = await call('POST', '/api/v1/oid4vci/issue', key, { supported_cred_id: cfg, credential_subject: SUBJECT, did });
    return { uri: o.credential_offer_uri as string, exchangeId: o.exchange.exchange_id as string };
  };
  const offers = async (cfg: string, n: number) => {
    const out: { uri: string; exchangeId: string }[] = [];
    for (let i = 0; i < n; i += 20) out.push(...(await Promise.all(Array.from({ length: Math.min(20, n - i) }, () => offer(cfg)))));
    return out;
  };
  const issued: { exchangeId: string; uri: string; idx: number }[] = [];
  const receive = async (o: { uri: string; exchangeId: string }, cfg: string) => {
    const got = await new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(o.uri);
    const jwt = got.credentials[0]!.split('~')[0]!;
    if (cfg === bound) {
      const ref = getStatusListFromJWT(jwt);
      issued.push({ exchangeId: o.exchangeId, uri: ref.uri, idx: ref.idx });
    } else if ((decodeJwt(jwt) as Record<string, unknown>).status !== undefined) throw new Error('an unbound configuration issued a status claim');
  };
  // Warm-up at full concurrency: with less, the first timed round ran 10–15 % slower whichever configuration it had.
  for (const cfg of [bound, unbound]) {
    const warm = await offers(cfg, 250);
    await concurrently(warm.length, CONCURRENCY, (i) => receive(warm[i]!, cfg));
  }
  const flows = new Map<string, { times: number[]; seconds: number; rounds: number[] }>([
    [bound, { times: [], seconds: 0, rounds: [] }],
    [unbound, { times: [], seconds: 0, rounds: [] }],
  ]);
  // ABBA BAAB: linear drift and order effects fall on both alike.
  for (const cfg of [bound, unbound, unbound, bound, unbound, bound, bound, unbound]) {
    const batch = await offers(cfg, FLOWS / 4);
    await settle(); // the relay has worked through the earlier events
    const r = await concurrently(batch.length, CONCURRENCY, (i) => receive(batch[i]!, cfg));
    const f = flows.get(cfg)!;
    f.times.push(...r.times);
    f.seconds += r.seconds;
    f.rounds.push(r.times.length / r.seconds);
  }
  console.log('\n### Status lists: whole issuance flows at 50 concurrent wallets, with and without a status entry\n');
  console.log(`The spec wallet's \`receive\` over HTTP (offer by reference, issuer and AS metadata, token, nonce, credential with one ES256 proof), one new wallet per flow, ${CONCURRENCY} at once; SD-JWT VC with 3 claims, issuer did:key (Ed25519); offers made beforehand, untimed. ${FLOWS} flows per configuration in four rounds each, after 250 untimed ones (order ABBA BAAB, A bound; each round starts once the process is idle again); "bound" has a revocation definition, so each credential gets an index and its entry, definition check and \`entry.assigned\` event join the issuing transaction.\n`);
  console.log('| configuration | flows | flows/s | flows/s per round | flow p50 ms | flow p99 ms |');
  console.log('|---|---|---|---|---|---|');
  for (const [cfg, name] of [
    [unbound, 'no status list'],
    [bound, 'bound to a status list definition'],
  ] as const) {
    const r = flows.get(cfg)!;
    const s = summary(r.times);
    console.log(`| ${name} | ${r.times.length} | ${(r.times.length / r.seconds).toFixed(0)} | ${r.rounds.map((x) => x.toFixed(0)).join(', ')} | ${f1(s.p50)} | ${f1(s.p99)} |`);
  }

  // 2. Revocation → published list.
  const listUrl = issued[0]!.uri;
  if (!issued.every((i) => i.uri === listUrl)) throw new Error('the bound credentials span more than one list');
  const statuses = async (idxs: number[]) => {
    const res = await fetch(listUrl);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`GET ${listUrl}: ${res.status} ${body}`);
    const list = getListFromStatusListJWT(body);
    return idxs.map((i) => list.getStatus(i));
  };
  /** Polls the public list every 25 ms from `t0` until `done` says so; returns when (performance.now()) it did. */
  const pollUntil = async (t0: number, done: () => Promise<boolean>, timeoutMs = 60_000) => {
    for (let k = 1; ; k++) {
      if (await done()) return performance.now();
      if (performance.now() - t0 > timeoutMs) throw new Error(`not published within ${timeoutMs} ms`);
      await sleep(Math.max(0, t0 + k * POLL_MS - performance.now()));
    }
  };
  const revoke = (exchangeId: string) => call('PATCH', `/api/v1/status-list/entries/revoke/${exchangeId}`, key);
  /** The list's signatures so far: its `status_list.published` events in the wallet's outbox, by format. */
  const published = async (defId: string, list: number) => {
    const byFormat: Record<string, number> = {};
    let start: Record<string, unknown> | undefined;
    do {
      const out = await ddb.send(
        new QueryCommand({
          TableName: LOCAL_TABLE_NAME,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :evt)',
          FilterExpression: '#e.#t = :type AND #e.#d.definition_id = :def AND #e.#d.#l = :list',
          ExpressionAttributeNames: { '#e': 'event', '#t': 'type', '#d': 'data', '#l': 'list' },
          ExpressionAttributeValues: { ':pk': `W#${walletId}`, ':evt': 'EVT#', ':type': 'status_list.published', ':def': defId, ':list': list },
          ExclusiveStartKey: start,
        }),
      );
      for (const i of out.Items ?? []) byFormat[i.event.data.format] = (byFormat[i.event.data.format] ?? 0) + 1;
      start = out.LastEvaluatedKey;
    } while (start);
    return byFormat;
  };
  const total = (c: Record<string, number>) => Object.values(c).reduce((x, y) => x + y, 0);
  /** Waits until the list's signature count has not moved for 5 s (the publish jobs are done). */
  const settledSignatures = async (defId: string, list: number) => {
    let last = await published(defId, list);
    let since = performance.now();
    while (performance.now() - since < 5000) {
      await sleep(500);
      const now = await published(defId, list);
      if (total(now) !== total(last)) {
        last = now;
        since = performance.now();
      }
    }
    return last;
  };

  const listNo = Number(listUrl.split('/').at(-2));
  await statuses([0]); // first fetch signs the list
  const [warm, ...rest] = issued;
  // Untimed: also proves the relay has worked through part 1's events (the stream is in order).
  await revoke(warm!.exchangeId);
  await pollUntil(performance.now(), async () => (await statuses([warm!.idx]))[0] === 1);
  const beforeSingles = await settledSignatures(boundDef.id, listNo);
  const singleTimes: number[] = [];
  for (const s of rest.slice(0, SINGLES)) {
    await revoke(s.exchangeId);
    const t0 = performance.now();
    const t1 = await pollUntil(t0, async () => (await statuses([s.idx]))[0] === 1);
    singleTimes.push(t1 - t0);
  }
  const afterSingles = await settledSignatures(boundDef.id, listNo);

  const burst = rest.slice(SINGLES, SINGLES + BURST);
  if (burst.length < BURST) throw new Error(`only ${burst.length} credentials left for the burst`);
  const patchTimes: number[] = [];
  const failed: string[] = [];
  let lastOk = 0;
  const tb = performance.now();
  const patches = Promise.all(
    burst.map(async (b) => {
      const t = performance.now();
      try {
        await revoke(b.exchangeId);
        const done = performance.now();
        lastOk = Math.max(lastOk, done);
        patchTimes.push(done - t);
      } catch (e) {
        failed.push(e instanceof Error ? e.message : String(e));
      }
    }),
  );
  // Polled from the first PATCH on; a revoked index never goes back to 0.
  const shown = new Set<number>();
  let patchesDone = false;
  void patches.then(() => (patchesDone = true));
  const allShown = await pollUntil(tb, async () => {
    const got = await statuses(burst.map((b) => b.idx));
    got.forEach((v, i) => v === 1 && shown.add(i));
    return patchesDone && shown.size === burst.length - failed.length;
  });
  await patches;
  const afterBurst = await settledSignatures(boundDef.id, listNo);

  const s = summary(singleTimes);
  const p = summary(patchTimes);
  const fmt = (c: Record<string, number>) => Object.entries(c).map(([k, v]) => `${v} ${k}`).join(', ') || '0';
  const diff = (x: Record<string, number>, y: Record<string, number>) => Object.fromEntries(Object.keys(y).map((k) => [k, y[k]! - (x[k] ?? 0)]).filter(([, v]) => (v as number) > 0));
  console.log('\n### Status lists: from a revocation to the published list\n');
  console.log(`Time from \`PATCH /api/v1/status-list/entries/revoke/{exchange}\`'s 200 until a GET of the public IETF list (polled every ${POLL_MS} ms, read with \`@sd-jwt/jwt-status-list\` \`getListFromStatusListJWT(...).getStatus(idx)\`) shows the index as 1. Lists are re-published in the background: event → outbox relay → status job delayed \`PUBLISH_DELAY_SECONDS\` = ${PUBLISH_DELAY_SECONDS} s → status worker. The local pollers add their own latency: the relay is a DynamoDB Streams poller (100 ms pauses when a read is empty), the worker an SQS poller short-polling for 10 messages (pauses 50 ms doubling to 500 ms when empty), both in the bench's process; after 5 s without activity their pauses grow to 20 s and 4 s, which any API response or worker invocation ends (infra/local/pollers.ts). Deployed it is stream → relay Lambda (batching window up to 1 s) → SQS delay 1 s → status worker Lambda (no batching window; up to 10 at once, one builder per list).\n`);
  console.log('| | revocations | p50 ms | p95 ms | max ms | signatures (status_list.published) |');
  console.log('|---|---|---|---|---|---|');
  console.log(`| one at a time, sequential | ${singleTimes.length} | ${s.p50.toFixed(0)} | ${s.p95.toFixed(0)} | ${s.max.toFixed(0)} | ${fmt(diff(beforeSingles, afterSingles))} |`);
  console.log('\nA burst: ' + BURST + ' PATCHes sent at once on one list; times from the first PATCH sent.\n');
  console.log('| burst | PATCH p50 ms | PATCH p99 ms | last 200 at ms | all shown at ms | all shown after last 200 ms | failed PATCHes | signatures (status_list.published) |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(`| ${burst.length} revocations | ${p.p50.toFixed(0)} | ${p.p99.toFixed(0)} | ${(lastOk - tb).toFixed(0)} | ${(allShown - tb).toFixed(0)} | ${(allShown - lastOk).toFixed(0)} | ${failed.length} | ${fmt(diff(afterSingles, afterBurst))} |`);
  if (failed.length) console.log(`\nFailed PATCHes: ${[...new Set(failed)].join('; ')}`);
  console.log('\nSignatures here come from one local worker. Deployed, up to 10 worker invocations run at once; they coalesce on the list\'s lease (one builds, the others mark it dirty and the builder looks once more), so a burst still costs one signature per format plus one for changes that land during the build.');

  // 3. Fetching a published 131,072-entry list with 1 % set (shards written as setStatus does, then one PUT publish per format).
  const fetchDef = await call('POST', '/api/v1/status-list/defs', key, { list_type: 'ietf', issuer_did: did });
  const set = new Set<number>();
  while (set.size < Math.round(LIST_SIZE / 100)) set.add(randomInt(LIST_SIZE));
  const shards = new Map<number, number[]>();
  for (const i of set) shards.set(Math.floor(i / fetchDef.shard_size), [...(shards.get(Math.floor(i / fetchDef.shard_size)) ?? []), i % fetchDef.shard_size]);
  const ops: WriteOp[] = [...shards].map(([shard, offsets]) => ({ type: 'update', key: statusKeys.shard(scope, fetchDef.id, 0, shard), set: Object.fromEntries(offsets.map((o) => [statusAttribute(o), 1])), add: { version: 1 } }));
  for (let i = 0; i < ops.length; i += 25) await store.write(ops.slice(i, i + 25));
  // The lists' URLs as publishing names them (`<base>/status-lists/<public_ref>/<def>/0/<format>`).
  const ietfUrl = (await call('PUT', `/api/v1/status-list/defs/${fetchDef.id}/publish`, key, {})).status_lists[0] as string;
  const w3cUrl = (await call('PUT', `/api/v1/status-list/defs/${fetchDef.id}/publish`, key, { status_type: 'w3c' })).status_lists[0] as string;
  const urls = { ietf: ietfUrl, w3c: w3cUrl };
  const etags: Record<string, string> = {};
  const sizes: Record<string, number> = {};
  for (const [format, url] of Object.entries(urls)) {
    const res = await fetch(url);
    const token = await res.text();
    etags[format] = res.headers.get('etag')!;
    sizes[format] = token.length;
    const count =
      format === 'ietf'
        ? (() => {
            const list = getListFromStatusListJWT(token);
            let n = 0;
            for (let i = 0; i < LIST_SIZE; i++) n += list.getStatus(i);
            return n;
          })()
        : (() => {
            const list = decodeBitstringStatusList((decodeJwt(token) as any).credentialSubject.encodedList, 1);
            let n = 0;
            for (let i = 0; i < LIST_SIZE; i++) n += list.status(i);
            return n;
          })();
    if (count !== set.size) throw new Error(`${format} list shows ${count} set, expected ${set.size}`);
  }
  const sequential = async (url: string, headers: Record<string, string>, want: number) => {
    for (let i = 0; i < 50; i++) await (await fetch(url, { headers })).arrayBuffer();
    const times: number[] = [];
    for (let i = 0; i < FETCHES; i++) {
      const t = performance.now();
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      times.push(performance.now() - t);
      if (res.status !== want) throw new Error(`GET ${url}: ${res.status}, expected ${want}`);
    }
    return summary(times);
  };
  await settle();
  const rows: string[] = [];
  await cannon(urls.ietf, {}); // warm-up (JIT, connections)
  for (const format of ['ietf', 'w3c'] as const) {
    for (const [what, headers, want] of [
      ['200', {}, 200],
      ['304 (If-None-Match: current ETag)', { 'if-none-match': etags[format]! }, 304],
    ] as const) {
      const seq = await sequential(urls[format], headers, want);
      const c = await cannon(urls[format], headers);
      const other = Object.entries(c.statusCodeStats).filter(([code]) => Number(code) !== want);
      if (c.errors || other.length) throw new Error(`${format} ${what}: ${c.errors} errors, other statuses ${JSON.stringify(other)}`);
      rows.push(`| ${format} (${sizes[format]} B) | ${what} | ${seq.p50.toFixed(2)} | ${seq.p99.toFixed(2)} | ${c.requests.average.toFixed(0)} | ${c.latency.p50} | ${c.latency.p99} |`);
    }
  }
  console.log('\n### Status lists: fetching a published list\n');
  console.log(`GET of the public URL of a published 131,072-entry revocation list with 1 % (${set.size}) of entries set (shard attributes written directly, then \`PUT .../publish\` per format), served from its stored publication: ${FETCHES} sequential requests with fetch in the bench's process, then autocannon (own process) at 10 connections for ${DURATION_S} s.\n`);
  console.log('| list (token size) | answer | sequential p50 ms | sequential p99 ms | autocannon req/s | autocannon p50 ms | autocannon p99 ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);

  ddbClient.destroy();
  await rt.stop();
}

runBench(main);
