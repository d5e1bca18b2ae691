/**
 * `npm run bench`: prints the figures recorded in docs/benchmarks.md. Each part runs in its own
 * process (one local runtime per process), one after the other so they do not share the 2 cores.
 */
import { spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';

const parts: { script: string; env?: Record<string, string> }[] = [
  { script: 'test/bench/dynamodb-ceiling.ts' },
  { script: 'test/bench/dynamodb-ops.ts' }, // DynamoDB Local's JVM CPU per request, by operation
  { script: 'test/bench/http.ts', env: { BENCH_AUTH_CACHE_TTL: '30' } },
  { script: 'test/bench/http.ts', env: { BENCH_AUTH_CACHE_TTL: '0', BENCH_SKIP_AUTHORIZER: '1' } },
  { script: 'test/bench/webhooks.ts' },
  { script: 'test/bench/webhook-latency.ts' }, // per-event delivery latency, idle and at a steady rate
  { script: 'test/bench/signing.ts' },
  { script: 'test/bench/jsonld-signing.ts' }, // JSON-LD proof suites: signing core vs. raw library, verify
  { script: 'test/bench/jsonld-bundle.ts' }, // the signing stack's bundle size and cold import
  { script: 'test/bench/jsonld-issuance-credo.ts' }, // POST /api/v1/credentials/json-ld to a Credo holder, end to end
  { script: 'test/bench/anoncreds-cl.ts' }, // AnonCreds issuer primitives (BN254, CL signature, tails)
  { script: 'test/bench/anoncreds-issuer.ts' }, // credential definitions through the worker, revocations
  { script: 'test/bench/anoncreds-issuance-credo.ts' }, // POST /api/v1/credentials (AnonCreds) to a Credo holder, end to end
  { script: 'test/bench/didcomm-envelope.ts' },
  { script: 'test/bench/didcomm-endpoint.ts' }, // the public endpoint, and a round trip with Credo
  { script: 'test/bench/status-list-encoding.ts' },
  { script: 'test/bench/status-lists.ts' },
  { script: 'test/bench/sessions.ts' },
  { script: 'test/bench/oid4vci.ts' },
  { script: 'test/bench/issuance-peer.ts' }, // ours beside Credo's issuer, same wallet
  { script: 'test/bench/issuance-requests.ts' }, // our requests to the emulators per offer and per flow
  { script: 'test/bench/node-overhead.ts' }, // ULIDs and the SDK's client-side CPU per request, before and after
  { script: 'test/bench/oid4vp.ts' },
  { script: 'test/bench/bulk-email.ts' },
  { script: 'test/bench/bundles.ts' },
  { script: 'test/bench/idle.ts' }, // npm start with no traffic, 60 s
];
const only = process.env.BENCH_ONLY; // e.g. BENCH_ONLY=webhooks runs just that part

const seconds = process.env.BENCH_SECONDS ?? '10';
console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; ${seconds} s per load run`);
for (const p of parts.filter((x) => !only || x.script.includes(only))) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--no-deprecation', p.script], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', ...p.env },
  });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    process.exit(r.status ?? 1);
  }
}
