/**
 * Part of `npm run bench` (see run.ts): figures for docs/benchmarks.md. It prints, it does not judge.
 *
 * 1. Authenticated requests through the local runtime (gateway → authorizer → function → DynamoDB
 *    Local) at 1 and 20 concurrent clients, driven by autocannon in a separate process so the load
 *    generator does not share the server's event loop.
 * 2. The authorizer's own time per decision, called in-process (valid key: HMAC + GSI query; a
 *    malformed key: refused before any I/O).
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { startLocalRuntime } from '../../infra/local/runtime';

const run = promisify(execFile);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);

interface Cannon {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
}

async function cannon(url: string, key: string, connections: number): Promise<Cannon> {
  const { stdout } = await run(
    process.execPath,
    ['node_modules/autocannon/autocannon.js', '-j', '-c', String(connections), '-d', String(DURATION_S), '-H', `x-api-key=${key}`, url],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as Cannon;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main() {
  const ttl = Number(process.env.BENCH_AUTH_CACHE_TTL ?? 30);
  // Throttles lifted: this measures what a request costs, not the limits (one wallet would hit its usage plan).
  const unthrottled = { rateLimit: 1e9, burstLimit: 1e9 };
  const rt = await startLocalRuntime({
    port: 0,
    dataDir: null,
    logLevel: 'SILENT',
    authorizerCacheTtlSeconds: ttl,
    throttles: { stage: unthrottled, tenant: unthrottled, platform: unthrottled, publicRoute: unthrottled, account: unthrottled },
    sourceLimits: { allRequests: 1e9, publicRequests: 1e9 }, // one source (127.0.0.1) stands for every client
  });
  const base = rt.baseApiKey!;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${rt.url}${path}`, { method: 'POST', headers: { 'x-api-key': base, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await res.json()) as Record<string, any>;
  };
  const wallet = await post('/api/subwallet/create', { wallet_name: 'bench' });
  const key = await post('/api/apikey/create', { wallet_id: wallet.wallet_id, roles: ['admin'], name: 'bench' });

  const rows: string[] = [];
  const targets = [
    { name: `GET /api/subwallets/{id} (base key)`, url: `${rt.url}/api/subwallets/${wallet.wallet_id}`, key: base },
    { name: 'GET /api/v1/wallet (wallet key)', url: `${rt.url}/api/v1/wallet`, key: key.api_key as string },
  ];
  await cannon(targets[0]!.url, base, 4).catch(() => undefined); // warm-up (JIT, connections)
  for (const t of targets) {
    for (const c of [1, 20]) {
      const r = await cannon(t.url, t.key, c);
      if (r.non2xx || r.errors) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      rows.push(`| ${t.name} | ${c} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.requests.total} |`);
    }
  }

  console.log(`\n### Through the local runtime, authorizer cache TTL ${ttl} s${ttl ? ' (as deployed)' : ' (every request runs the authorizer)'}\n`);
  console.log('| route | clients | req/s | p50 ms | p99 ms | requests |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);

  // Authorizer decisions, in-process.
  const { handler } = (await import('../../functions/authorizer/handler')) as {
    handler: (e: { type: 'TOKEN'; authorizationToken: string; methodArn: string }) => Promise<unknown>;
  };
  const methodArn = 'arn:aws:execute-api:local:000000000000:local/local/GET/api/v1/wallet';
  const decide = async (token: string, n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await handler({ type: 'TOKEN', authorizationToken: token, methodArn }).catch(() => undefined);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99), mean: times.reduce((a, b) => a + b, 0) / n };
  };
  if (process.env.BENCH_SKIP_AUTHORIZER) {
    await rt.stop();
    return;
  }
  await decide(key.api_key, 200);
  const valid = await decide(key.api_key, 3000);
  const junk = await decide('not-a-key', 3000);
  const token = await decide(wallet.token, 3000);

  await rt.stop();

  console.log('\n### The authorizer function alone, in-process, 3000 decisions each\n');
  console.log('| authorizer decision | mean ms | p50 ms | p99 ms |');
  console.log('|---|---|---|---|');
  const fmt = (x: number) => x.toFixed(3);
  console.log(`| valid API key (HMAC + GSI query on DynamoDB Local) | ${fmt(valid.mean)} | ${fmt(valid.p50)} | ${fmt(valid.p99)} |`);
  console.log(`| subwallet token (HS256 verify, no I/O) | ${fmt(token.mean)} | ${fmt(token.p50)} | ${fmt(token.p99)} |`);
  console.log(`| malformed value (refused before I/O) | ${fmt(junk.mean)} | ${fmt(junk.p50)} | ${fmt(junk.p99)} |`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
