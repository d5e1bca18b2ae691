/**
 * Part of `npm run bench` (`BENCH_ONLY=issuer-bundles npm run bench`): the functions that issue
 * JSON-LD (issue 23) and AnonCreds (issue 24) credentials, each bundled as the stack bundles it
 * (esbuild, minified ESM for Node 22, the deployed BUNDLE_ALIASES and `createRequire` banner; no
 * `cdk synth`, which bundles every function), then its `index.mjs` size and its cold import: the
 * median of BENCH_BUNDLE_RUNS (11) fresh Node processes importing it with plausible deployed
 * variables (nothing is contacted at import). `BENCH_ONLY=bundles` gives the same sizes from the
 * synthesized assembly, for every function.
 */
import { build, type Metafile } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_ALIASES, ESM_REQUIRE_BANNER } from '../../infra/constructs/service-function';
import { REPO_ROOT } from '../../infra/service-app';
import { WORKER_ENTRIES } from '../../infra/stacks/service-functions';
import { queueUrlEnvName, type QueueId } from '../../lib/service/resources';
import { median, percentile } from './stats';

const RUNS = Number(process.env.BENCH_BUNDLE_RUNS ?? '11');
const NODE = join(REPO_ROOT, 'node_modules', '.bin', 'node');
const QUEUE_IDS: QueueId[] = ['email', 'webhook', 'status', 'didcomm-inbound', 'didcomm-outbound', 'anoncreds', 'credential-issue'];
/** What a handler may read at import (plausible values; nothing is contacted). */
const ENV = {
  AWS_REGION: 'eu-central-1',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'y',
  KEY_BACKEND: 'kms',
  TABLE_NAME: 't',
  MAC_KMS_KEY_ID: 'k',
  ISSUER_KEY_TAG: 's',
  TENANT_ROLE_ARN: 'arn:aws:iam::123456789012:role/t',
  REGISTRY_ROLE_ARN: 'arn:aws:iam::123456789012:role/r',
  DIDCOMM_KMS_KEY_ID: 'd',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  // Every queue's URL (lib/service/resources.ts names them): a function reads the ones it sends to.
  ...Object.fromEntries(QUEUE_IDS.map((id) => [queueUrlEnvName(id), `https://sqs.eu-central-1.amazonaws.com/123456789012/${id}`])),
};
const FUNCTIONS: [name: string, entry: string][] = [
  ['credential-issuer (signs JSON-LD credentials, KMS)', WORKER_ENTRIES['credential-issuer']!],
  ['jsonld (context files; checks offers with the signing stack)', 'functions/jsonld/handler.ts'],
  ['anoncreds (schemas, credential definitions, revocation routes)', 'functions/anoncreds/handler.ts'],
  ['anoncreds-public (the did:web AnonCreds objects)', 'functions/anoncreds-public/handler.ts'],
  ['anoncreds-worker (CL keys, registries, tails)', WORKER_ENTRIES['anoncreds-worker']!],
];

const kib = (b: number) => (b / 1024).toFixed(1);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' / ');

function largest(meta: Metafile): string {
  const out = Object.values(meta.outputs).find((o) => Object.keys(o.inputs).length > 0)!;
  const by = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(out.inputs)) {
    const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const name = m ? m[1]! : '(own)';
    by.set(name, (by.get(name) ?? 0) + bytesInOutput);
  }
  return [...by].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([n, b]) => `${n} ${kib(b)}`).join(', ');
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'issuer-bundles-'));
  try {
    console.log(`\n### The issuing functions' bundles and cold imports (${process.version})\n`);
    console.log(`Load average at start: ${load()}. Cold import: ${RUNS} fresh processes each, \`await import()\` of the bundle timed inside the process.\n`);
    console.log('| function | bytes | cold import p50 ms | p99 ms (the slowest of 11) | largest parts (KiB) |');
    console.log('|---|---|---|---|---|');
    for (const [i, [name, entry]] of FUNCTIONS.entries()) {
      const outfile = join(dir, String(i), 'index.mjs');
      const r = await build({
        absWorkingDir: REPO_ROOT,
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node22',
        minify: true,
        mainFields: ['module', 'main'],
        alias: { ...BUNDLE_ALIASES },
        banner: { js: ESM_REQUIRE_BANNER },
        metafile: true,
        logLevel: 'error',
      });
      const bytes = Object.entries(r.metafile.outputs).find(([k]) => k.endsWith('.mjs'))![1].bytes;
      const ms: number[] = [];
      for (let k = 0; k < RUNS; k++) {
        const run = spawnSync(NODE, ['--input-type=module', '-e', `const t = performance.now(); const m = await import(${JSON.stringify(outfile)}); if (typeof m.handler !== 'function') throw new Error('no handler'); console.log(performance.now() - t);`], {
          env: { ...ENV, PATH: process.env.PATH ?? '' },
          encoding: 'utf8',
        });
        if (run.status !== 0) throw new Error(`${name}: import failed: ${run.stderr.slice(-600)}`);
        ms.push(Number(run.stdout.trim().split('\n').pop()));
      }
      console.log(`| ${name} | ${bytes} | ${median(ms).toFixed(0)} | ${percentile(ms, 99).toFixed(0)} | ${largest(r.metafile)} |`);
    }
    console.log(`\nLoad average at the end: ${load()}.`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
