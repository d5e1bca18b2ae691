/**
 * Part of `npm run bench` (`BENCH_ONLY=issuance-requests`): the requests our local runtime sends to
 * DynamoDB Local and the SQS emulator while wallets redeem offers, by operation, with DynamoDB Local's
 * JVM CPU over the same window: what the JVM's share of issuance-peer.ts's CPU per flow is made of
 * (multiply by dynamodb-ops.ts's cost per request). Our side of issuance-peer.ts only, the same
 * credential and wallet, the runtime in this process (its outgoing requests are counted from Node's
 * `http.client.request.start` diagnostics channel, by `X-Amz-Target`; the wallet's fetch is not on it).
 *
 * Phases, each after a warm-up of 30 flows: offers created by 10 callers (per offer), then flows at
 * 10 wallets started at once after their offers as issuance-peer.ts does (per flow, the window the
 * bench times), then the tail until the pollers are idle again, and 5 s with no traffic.
 * Knobs: BENCH_REQ_FLOWS (300), BENCH_REQ_CONCURRENCY (10).
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SpecWallet } from '../helpers/spec-wallet';
import { processCpuMs } from '../helpers/processes';
import { runBench, startBenchRuntime } from './harness';
import { BENCH_CLAIMS, BENCH_CONFIGURATION_ID, BENCH_SD_LIST, BENCH_SUBJECT, BENCH_VCT, childPids } from './peer/shared';
import { loadAverage } from './stats';

const FLOWS = Number(process.env.BENCH_REQ_FLOWS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_REQ_CONCURRENCY ?? 10);
const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

/** Requests by operation (`DynamoDB.GetItem`, `Streams.GetRecords`, `SQS.ReceiveMessage`, …). */
let counts = new Map<string, number>();
/** GetRecords answers by body size: an empty one is its iterator alone (well under 1 KB). */
let getRecordsBytes: number[] = [];
const SERVICE: Record<string, string> = { DynamoDB_20120810: 'DynamoDB', DynamoDBStreams_20120810: 'Streams', AmazonSQS: 'SQS' };

subscribe('http.client.request.start', (msg) => {
  const req = (msg as { request: ClientRequest }).request;
  const target = String(req.getHeader('x-amz-target') ?? `${req.method} ${req.host}${req.path}`);
  const [service, op] = target.split('.');
  const name = op ? `${SERVICE[service!] ?? service}.${op}` : target;
  counts.set(name, (counts.get(name) ?? 0) + 1);
});
subscribe('http.client.response.finish', (msg) => {
  const { request, response } = msg as { request: ClientRequest; response: IncomingMessage };
  if (String(request.getHeader('x-amz-target')) !== 'DynamoDBStreams_20120810.GetRecords') return;
  getRecordsBytes.push(Number(response.headers['content-length'] ?? -1));
});

function take(): { counts: Map<string, number>; getRecords: number[] } {
  const out = { counts, getRecords: getRecordsBytes };
  counts = new Map();
  getRecordsBytes = [];
  return out;
}

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < n; i = next++) await fn(i);
  }));
}

runBench(async () => {
  console.log('\n### Requests to the emulators during issuance, by operation\n');
  console.log(`Load average at start: ${loadAverage()}. ${FLOWS} offers by 10 callers, then ${FLOWS} flows at ${CONCURRENCY} wallets (token, nonce, credential; the SD-JWT VC of issuance-peer.ts).\n`);
  const { rt, call, newWallet } = await startBenchRuntime();
  const jvm = childPids(process.pid, 'java')[0];
  if (!jvm) throw new Error('no DynamoDB Local JVM among this process’s children');
  try {
    const { key } = await newWallet('bench-requests');
    const did = (await call('POST', '/api/v1/create-did', key, { method: 'key' })).did.did as string;
    const sd = await call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', key, { id: BENCH_CONFIGURATION_ID, vct: BENCH_VCT, claims: BENCH_CLAIMS, sd_list: BENCH_SD_LIST });
    const issue = async () => (await call('POST', '/api/v1/oid4vci/issue', key, { supported_cred_id: sd.supported_cred_id, credential_subject: BENCH_SUBJECT, did })).offer;
    const first = await issue();
    const issuer = first.credential_issuer as string;
    const discovery = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const metadata = await discovery.fetchIssuerMetadata(issuer);
    const as = await discovery.fetchAuthorizationServerMetadata((metadata.authorization_servers?.[0] as string | undefined) ?? issuer);
    const configuration = metadata.credential_configurations_supported[BENCH_CONFIGURATION_ID];
    const flow = async (w: SpecWallet, code: string) => {
      const token = await w.token({ tokenEndpoint: as.token_endpoint, preAuthorizedCode: code });
      const nonce = await w.nonce(metadata.nonce_endpoint);
      const proof = w.makeProof({ aud: issuer, nonce });
      const res = await w.credential({ accessToken: token.access_token, configurationId: BENCH_CONFIGURATION_ID, proofs: [proof], credentialEndpoint: metadata.credential_endpoint, configuration });
      if (res.credentials.length !== 1) throw new Error('expected one credential');
    };
    const codeOf = async () => (await issue()).grants[PRE_AUTH]['pre-authorized_code'] as string;
    for (let i = 0; i < 30; i++) await flow(discovery, await codeOf());
    await new Promise((r) => setTimeout(r, 3000));

    const phases: { name: string; per: number; unit: string; counts: Map<string, number>; getRecords: number[]; jvm: number; seconds: number }[] = [];
    const phase = async (name: string, per: number, unit: string, work: () => Promise<void>) => {
      take();
      const cpu0 = processCpuMs(jvm);
      const t0 = performance.now();
      await work();
      const seconds = (performance.now() - t0) / 1000;
      phases.push({ name, per, unit, ...take(), jvm: processCpuMs(jvm) - cpu0, seconds });
    };
    const codes: string[] = [];
    await phase('offers, 10 callers', FLOWS, 'offer', () => pool(FLOWS, 10, async (i) => void (codes[i] = await codeOf())));
    const wallets = Array.from({ length: CONCURRENCY }, () => new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }));
    await phase(`flows, ${CONCURRENCY} wallets (the timed window)`, FLOWS, 'flow', () => pool(FLOWS, CONCURRENCY, (k) => flow(wallets[k % CONCURRENCY]!, codes[k]!)));
    await phase('tail: 3 s after the last flow', FLOWS, 'flow', () => new Promise((r) => setTimeout(r, 3000)));
    await phase('idle, 5 s (per second)', 5, 's', () => new Promise((r) => setTimeout(r, 5000)));

    const ops = [...new Set(phases.flatMap((p) => [...p.counts.keys()]))].sort();
    console.log(`| operation | ${phases.map((p) => `${p.name}: per ${p.unit}`).join(' | ')} |`);
    console.log(`|---|${phases.map(() => '---').join('|')}|`);
    for (const op of ops) console.log(`| ${op} | ${phases.map((p) => ((p.counts.get(op) ?? 0) / p.per).toFixed(2)).join(' | ')} |`);
    const total = (p: (typeof phases)[number]) => [...p.counts.values()].reduce((a, b) => a + b, 0);
    console.log(`| all requests | ${phases.map((p) => (total(p) / p.per).toFixed(2)).join(' | ')} |`);
    console.log(`| DynamoDB Local JVM CPU ms | ${phases.map((p) => (p.jvm / p.per).toFixed(2)).join(' | ')} |`);
    console.log(`| seconds | ${phases.map((p) => p.seconds.toFixed(1)).join(' | ')} |`);
    for (const p of phases) {
      const sizes = p.getRecords;
      const empty = sizes.filter((b) => b >= 0 && b < 1000).length;
      console.log(`\n${p.name}: GetRecords ${sizes.length}, of which empty (< 1 KB) ${empty}; non-empty answers' mean size ${((sizes.filter((b) => b >= 1000).reduce((a, b) => a + b, 0)) / Math.max(1, sizes.length - empty) / 1024).toFixed(1)} KiB.`);
    }
    console.log(`\nLoad average at end: ${loadAverage()}.`);
  } finally {
    await rt.stop();
  }
});
