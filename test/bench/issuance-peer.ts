/**
 * Part of `npm run bench` (see run.ts; `BENCH_ONLY=issuance-peer`): our OpenID4VCI issuer side by
 * side with a standing peer, Credo 0.6.3's issuer (peer/credo-issuer.ts), in one run.
 *
 * Each issuer runs in its own child process (ours: the local runtime `npm start` runs, peer/ours.ts),
 * so the CPU of each is read from /proc/<pid>/stat on its own: our Node process, DynamoDB Local's JVM
 * (our runtime's child), Credo's Node process. The wallet is this process: the spec wallet
 * (test/helpers/spec-wallet.ts, node:crypto and fetch only, neither server's library), the same code
 * against both. Rounds alternate between the two (and which goes first), so machine load falls on
 * both alike: on a shared machine the absolute figures move, the ratio much less.
 *
 * Measured: the whole flow after the offer (token → nonce → credential with one ES256 `jwk` proof) at
 * 1 and 10 concurrent wallets; the two metadata GETs a wallet makes (credential issuer, authorization
 * server); offer creation at 10 concurrent callers (ours: the admin API; Credo: its agent API behind
 * one HTTP endpoint). Offers for the flows are created beforehand, untimed.
 *
 * BENCH_PEER_CPU_PROF=<dir>: our runtime's process runs with `--cpu-prof` into <dir>.
 * BENCH_PEER_WARMUP (400): untimed flows per side first, 10 wallets at once.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { SpecWallet, wellKnownUrls } from '../helpers/spec-wallet';
import { BENCH_CLAIMS, BENCH_CONFIGURATION_ID, BENCH_SD_LIST, BENCH_SUBJECT, BENCH_VCT, childPids } from './peer/shared';
import { processCpuMs } from '../helpers/processes';
import { loadAverage } from './stats';

const env = process.env;
const ROUNDS = Number(env.BENCH_PEER_ROUNDS ?? 3);
const FLOWS: Record<number, number> = { 1: Number(env.BENCH_PEER_FLOWS_1 ?? 100), 10: Number(env.BENCH_PEER_FLOWS_10 ?? 300) };
const OFFERS = Number(env.BENCH_PEER_OFFERS ?? 200);
const METADATA_GETS = Number(env.BENCH_PEER_METADATA_GETS ?? 200);
const WARMUP_FLOWS = Number(env.BENCH_PEER_WARMUP ?? 400);
const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

interface Proc {
  readonly label: string;
  readonly pid: number;
}

interface Side {
  readonly name: 'ours' | 'Credo';
  readonly procs: readonly Proc[];
  readonly issuer: string;
  readonly token: string;
  readonly nonce: string;
  readonly credential: string;
  readonly configuration: unknown;
  readonly metadataUrls: readonly [issuer: string, as: string];
  /** Creates one offer the way this server's users do; its pre-authorized code. */
  offer(): Promise<string>;
}

function start(script: string, execArgv: string[] = []): Promise<{ child: ChildProcess; msg: any }> {
  const child = fork(new URL(script, import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx', '--no-deprecation', ...execArgv],
    env: { ...env, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (msg) => resolve({ child, msg }));
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
  });
}

async function postJson(url: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** The first well-known location that answers 200: the URL a wallet ends up GETting. */
async function wellKnown(identifier: string, suffix: string): Promise<string> {
  for (const url of wellKnownUrls(identifier, suffix)) if ((await fetch(url)).status === 200) return url;
  throw new Error(`no ${suffix} metadata for ${identifier}`);
}

/** What a wallet learns from the metadata: endpoints and the configuration (the same discovery for both servers). */
async function discover(issuer: string): Promise<Pick<Side, 'token' | 'nonce' | 'credential' | 'configuration' | 'metadataUrls'>> {
  const w = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
  const metadata = await w.fetchIssuerMetadata(issuer);
  const asId = (metadata.authorization_servers?.[0] as string | undefined) ?? issuer;
  const as = await w.fetchAuthorizationServerMetadata(asId);
  return {
    token: as.token_endpoint,
    nonce: metadata.nonce_endpoint,
    credential: metadata.credential_endpoint,
    configuration: metadata.credential_configurations_supported[BENCH_CONFIGURATION_ID],
    metadataUrls: [await wellKnown(issuer, 'openid-credential-issuer'), await wellKnown(asId, 'oauth-authorization-server')],
  };
}

async function oursSide(): Promise<{ side: Side; child: ChildProcess }> {
  const prof = env.BENCH_PEER_CPU_PROF;
  const { child, msg } = await start('./peer/ours.ts', prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []);
  const { url, baseApiKey } = msg as { url: string; baseApiKey: string };
  const admin = (path: string, key: string, body?: unknown) => postJson(`${url}${path}`, { 'x-api-key': key }, body);
  const w = await admin('/api/subwallet/create', baseApiKey, { wallet_name: 'bench-peer', label: 'bench-peer' });
  const key = (await admin('/api/apikey/create', baseApiKey, { wallet_id: String(w.wallet_id), roles: ['admin'] })).api_key as string;
  const did = (await admin('/api/v1/create-did', key, { method: 'key' })).did.did as string;
  const sd = await admin('/api/v1/oid4vci/credentials-supported/sd-jwt', key, { id: BENCH_CONFIGURATION_ID, vct: BENCH_VCT, claims: BENCH_CLAIMS, sd_list: BENCH_SD_LIST });
  const issue = () => admin('/api/v1/oid4vci/issue', key, { supported_cred_id: sd.supported_cred_id, credential_subject: BENCH_SUBJECT, did });
  const issuer = (await issue()).offer.credential_issuer as string;
  const procs: Proc[] = [{ label: 'Node', pid: child.pid! }, ...childPids(child.pid!, 'java').map((pid) => ({ label: 'DynamoDB Local (Java)', pid }))];
  const offer = async () => (await issue()).offer.grants[PRE_AUTH]['pre-authorized_code'] as string;
  return { side: { name: 'ours', procs, issuer, offer, ...(await discover(issuer)) }, child };
}

async function credoSide(): Promise<{ side: Side; child: ChildProcess }> {
  const { child, msg } = await start('./peer/credo-issuer.ts');
  const { issuer, offerUrl } = msg as { issuer: string; offerUrl: string };
  const offer = async () => (await postJson(offerUrl, {})).pre_authorized_code as string;
  return { side: { name: 'Credo', procs: [{ label: 'Node', pid: child.pid! }], issuer, offer, ...(await discover(issuer)) }, child };
}

/** One wallet's flow after the offer: token, nonce, credential (one proof). */
async function flow(w: SpecWallet, side: Side, code: string): Promise<void> {
  const token = await w.token({ tokenEndpoint: side.token, preAuthorizedCode: code });
  const nonce = await w.nonce(side.nonce);
  const proof = w.makeProof({ aud: side.issuer, nonce });
  const res = await w.credential({ accessToken: token.access_token, configurationId: BENCH_CONFIGURATION_ID, proofs: [proof], credentialEndpoint: side.credential, configuration: side.configuration });
  if (res.credentials.length !== 1) throw new Error(`${side.name}: expected one credential, got ${res.credentials.length}`);
}

/** `n` calls of `fn`, `concurrency` at a time; each call's duration in ms. */
async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<{ times: number[]; results: T[] }> {
  const times: number[] = [];
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        results[i] = await fn(i);
        times.push(performance.now() - t);
      }
    }),
  );
  return { times, results };
}

/** Runs `work` and reads what it cost: wall seconds and CPU ms per process of the side. */
async function measured<T>(side: Side, work: () => Promise<T>): Promise<{ result: T; seconds: number; cpu: number[] }> {
  const before = side.procs.map((p) => processCpuMs(p.pid));
  const t0 = performance.now();
  const result = await work();
  const seconds = (performance.now() - t0) / 1000;
  return { result, seconds, cpu: side.procs.map((p, i) => processCpuMs(p.pid) - before[i]!) };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sortNum = (xs: number[]) => [...xs].sort((a, b) => a - b);

interface Tally {
  times: number[];
  seconds: number;
  count: number;
  cpu: number[];
  /** Per round: flows (or requests) per second. */
  rates: number[];
}
const tally = (side: Side): Tally => ({ times: [], seconds: 0, count: 0, cpu: side.procs.map(() => 0), rates: [] });
function add(t: Tally, times: number[], seconds: number, cpu: number[]) {
  t.times.push(...times);
  t.seconds += seconds;
  t.count += times.length;
  cpu.forEach((c, i) => (t.cpu[i]! += c));
  t.rates.push(times.length / seconds);
}
const cpuPer = (t: Tally) => t.cpu.reduce((a, b) => a + b, 0) / t.count;
const cpuSplit = (side: Side, t: Tally) => side.procs.map((p, i) => `${p.label} ${(t.cpu[i]! / t.count).toFixed(1)}`).join(', ');
const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;

async function main() {
  console.log('\n### OID4VCI side by side: our issuer and Credo 0.6.3, the same wallet, rounds alternated\n');
  console.log(`Load average at start: ${loadAverage()}. SD-JWT VC with 5 claims (4 selectively disclosable, one nested), issuer did:key Ed25519, ES256 holder key with \`jwk\` binding. Each issuer in its own process; ${ROUNDS} rounds per row, alternating which server goes first.\n`);
  const [a, b] = await Promise.all([oursSide(), credoSide()]);
  const sides = [a.side, b.side] as const;
  try {
    const wallet = () => new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    // Warm-up: every code path, JIT and DynamoDB Local's caches, on both. Long enough for the JVM's
    // compilers to settle (30 flows left the first row paying DynamoDB Local's JIT: docs/benchmarks.md).
    for (const side of sides) {
      const codes = (await pool(WARMUP_FLOWS, 10, () => side.offer())).results;
      const wallets = Array.from({ length: 10 }, wallet);
      await pool(codes.length, 10, (k) => flow(wallets[k % 10]!, side, codes[k]!));
      for (let i = 0; i < 30; i++) for (const url of side.metadataUrls) await fetch(url).then((r) => r.arrayBuffer());
    }

    console.log('| | concurrent wallets | flows | flows/s (rounds) | flow p50 ms | flow p99 ms | server CPU ms per flow | of which |');
    console.log('|---|---|---|---|---|---|---|---|');
    const flowTallies: Record<number, [Tally, Tally]> = {};
    for (const concurrency of [1, 10]) {
      const t = [tally(sides[0]), tally(sides[1])] as [Tally, Tally];
      flowTallies[concurrency] = t;
      for (let r = 0; r < ROUNDS; r++) {
        for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
          const side = sides[i]!;
          const codes = (await pool(FLOWS[concurrency]!, 10, () => side.offer())).results;
          const wallets = Array.from({ length: concurrency }, wallet);
          const m = await measured(side, () => pool(codes.length, concurrency, (k) => flow(wallets[k % concurrency]!, side, codes[k]!)));
          add(t[i]!, m.result.times, m.seconds, m.cpu);
        }
      }
      t.forEach((x, i) => {
        const s = sortNum(x.times);
        console.log(`| ${sides[i]!.name} | ${concurrency} | ${x.count} | ${(x.count / x.seconds).toFixed(1)} (${range(x.rates)}) | ${pct(s, 50).toFixed(1)} | ${pct(s, 99).toFixed(1)} | ${cpuPer(x).toFixed(1)} | ${cpuSplit(sides[i]!, x)} |`);
      });
    }

    // Metadata: the two GETs, one after the other, alternating servers per round.
    const meta = sides.map(() => [[], []] as [number[], number[]]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
        for (let k = 0; k < METADATA_GETS / ROUNDS; k++) {
          for (const [j, url] of sides[i]!.metadataUrls.entries()) {
            const t0 = performance.now();
            const res = await fetch(url);
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
            meta[i]![j]!.push(performance.now() - t0);
          }
        }
      }
    }

    // Offer creation at 10 concurrent callers.
    const offerT = [tally(sides[0]), tally(sides[1])];
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const side = sides[i]!;
        const m = await measured(side, () => pool(OFFERS, 10, () => side.offer()));
        add(offerT[i]!, m.result.times, m.seconds, m.cpu);
      }
    }

    const [o1, c1] = flowTallies[1]!;
    const [o10, c10] = flowTallies[10]!;
    const rate = (t: Tally) => t.count / t.seconds;
    const p50 = (xs: number[]) => pct(sortNum(xs), 50);
    console.log('\n| | ours | Credo | ours/Credo |');
    console.log('|---|---|---|---|');
    console.log(`| whole flow, 1 wallet: flows/s | ${rate(o1).toFixed(1)} | ${rate(c1).toFixed(1)} | ${(rate(o1) / rate(c1)).toFixed(2)}× |`);
    console.log(`| whole flow, 1 wallet: p50 ms | ${p50(o1.times).toFixed(1)} | ${p50(c1.times).toFixed(1)} | ${(p50(o1.times) / p50(c1.times)).toFixed(2)}× |`);
    console.log(`| whole flow, 10 wallets: flows/s | ${rate(o10).toFixed(1)} | ${rate(c10).toFixed(1)} | ${(rate(o10) / rate(c10)).toFixed(2)}× |`);
    console.log(`| server CPU ms per flow (1 and 10 wallets) | ${cpuPer(o1).toFixed(1)}, ${cpuPer(o10).toFixed(1)} (Node ${(o1.cpu[0]! / o1.count).toFixed(1)}, ${(o10.cpu[0]! / o10.count).toFixed(1)}) | ${cpuPer(c1).toFixed(1)}, ${cpuPer(c10).toFixed(1)} | ${(cpuPer(o1) / cpuPer(c1)).toFixed(2)}×, ${(cpuPer(o10) / cpuPer(c10)).toFixed(2)}× |`);
    const pair = (i: number) => p50(meta[i]![0]!) + p50(meta[i]![1]!);
    console.log(`| metadata GET p50 ms: issuer + AS | ${p50(meta[0]![0]!).toFixed(2)} + ${p50(meta[0]![1]!).toFixed(2)} | ${p50(meta[1]![0]!).toFixed(2)} + ${p50(meta[1]![1]!).toFixed(2)} | ${(pair(0) / pair(1)).toFixed(2)}× |`);
    console.log(`| offer creation, 10 callers: offers/s (rounds) | ${rate(offerT[0]!).toFixed(0)} (${range(offerT[0]!.rates)}) | ${rate(offerT[1]!).toFixed(0)} (${range(offerT[1]!.rates)}) | ${(rate(offerT[0]!) / rate(offerT[1]!)).toFixed(2)}× |`);
    console.log(`| offer creation: server CPU ms per offer | ${cpuPer(offerT[0]!).toFixed(1)} (${cpuSplit(sides[0], offerT[0]!)}) | ${cpuPer(offerT[1]!).toFixed(1)} | ${(cpuPer(offerT[0]!) / cpuPer(offerT[1]!)).toFixed(2)}× |`);
    console.log(`\nLoad average at end: ${loadAverage()}. Metadata: ${METADATA_GETS} pairs per server at ${sides[0].metadataUrls.join(' and ')} (ours) and ${sides[1].metadataUrls.join(' and ')} (Credo), ports aside.`);
  } finally {
    for (const c of [a.child, b.child]) c.disconnect();
    await Promise.all([a.child, b.child].map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
