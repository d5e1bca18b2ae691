/**
 * Part of `npm run bench` (`BENCH_ONLY=jsonld npm run bench`): what the JSON-LD signing stack weighs in
 * a function bundle, built as the stack builds functions (esbuild, minified ESM for Node 22, the
 * deployed BUNDLE_ALIASES and `createRequire` banner), before any function issues with it: the stack
 * alone, the `jsonld` function as deployed, and that function with the stack (the issuing function's
 * likely shape); then each bundle's cold import in fresh Node processes, and a proof made from the
 * stack's bundle (the CommonJS parts must work under the banner).
 */
import { build, type Metafile } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_ALIASES, BUNDLE_BUDGET_BYTES, ESM_REQUIRE_BANNER } from '../../infra/constructs/service-function';
import { REPO_ROOT } from '../../infra/service-app';
import { median } from './stats';

const RUNS = Number(process.env.BENCH_BUNDLE_RUNS ?? '7');
const NODE = join(REPO_ROOT, 'node_modules', '.bin', 'node');
/** What a function's handler reads at import (plausible values; nothing is contacted). */
const ENV = { AWS_REGION: 'eu-central-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y', KEY_BACKEND: 'kms', TABLE_NAME: 't', MAC_KMS_KEY_ID: 'k', ISSUER_KEY_TAG: 's', TENANT_ROLE_ARN: 'arn:aws:iam::123456789012:role/t' };

const STACK = "export { signCredential } from './lib/jsonld/signing';\nexport { offlineDocumentLoader } from './lib/jsonld/loader';\nexport { JsonLdStatusSource, withCredentialStatus } from './lib/jsonld/status';\nexport { didDocument } from './lib/dids/document';\nexport { multibaseKey } from './lib/dids/methods';\nexport { tenantScope } from './lib/store/keys';\n";
const ENTRIES: [string, string][] = [
  ['the signing stack alone (signing, loader, contexts, status entries)', STACK],
  ['the jsonld function as deployed', "export { handler } from './functions/jsonld/handler';\n"],
  ['the jsonld function with the signing stack', `export { handler } from './functions/jsonld/handler';\n${STACK}`],
];

const kib = (b: number) => (b / 1024).toFixed(1);

function packages(meta: Metafile): string {
  const out = Object.values(meta.outputs).find((o) => o.entryPoint !== undefined || Object.keys(o.inputs).length > 0)!;
  const by = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(out.inputs)) {
    const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const name = m ? m[1]! : '(own)';
    by.set(name, (by.get(name) ?? 0) + bytesInOutput);
  }
  return [...by].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([n, b]) => `${n} ${kib(b)}`).join(', ');
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'jsonld-bundle-'));
  try {
    console.log('\n### The JSON-LD signing stack in a bundle\n');
    console.log(`esbuild as deployed (aliases: ${Object.keys(BUNDLE_ALIASES).join(', ')}); budget ${BUNDLE_BUDGET_BYTES} bytes. Cold import: median of ${RUNS} fresh Node processes.\n`);
    console.log('| bundle | bytes | KiB | cold import ms | largest parts (KiB) |');
    console.log('|---|---|---|---|---|');
    for (const [i, [name, contents]] of ENTRIES.entries()) {
      const outfile = join(dir, String(i), 'index.mjs');
      const r = await build({
        stdin: { contents, resolveDir: REPO_ROOT, loader: 'ts', sourcefile: 'entry.ts' },
        bundle: true, platform: 'node', format: 'esm', target: 'node22', minify: true, mainFields: ['module', 'main'],
        alias: { ...BUNDLE_ALIASES }, banner: { js: ESM_REQUIRE_BANNER }, metafile: true, outfile, logLevel: 'error',
      });
      const bytes = Object.entries(r.metafile.outputs).find(([k]) => k.endsWith('.mjs'))![1].bytes;
      const ms: number[] = [];
      for (let k = 0; k < RUNS; k++) {
        const run = spawnSync(NODE, ['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(outfile)}); console.log(performance.now() - t);`], { env: { ...ENV, PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`${name}: import failed: ${run.stderr.slice(0, 400)}`);
        ms.push(Number(run.stdout.trim()));
      }
      console.log(`| ${name} | ${bytes} | ${kib(bytes)} | ${median(ms).toFixed(0)} | ${packages(r.metafile)} |`);
      if (i === 0) {
        // A proof from the bundle: an Ed25519Signature2020 over a did:key credential with a revocation entry (v1 + the status context), and an unknown context refused.
        const probe = join(dir, 'probe.mjs');
        writeFileSync(probe, `import { generateKeyPairSync, sign } from 'node:crypto';
const m = await import(${JSON.stringify(outfile)});
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const jwk = publicKey.export({ format: 'jwk' });
const did = 'did:key:' + m.multibaseKey(jwk);
const key = { did, document: m.didDocument(did, 'key', jwk), ref: 'r', alg: 'EdDSA' };
const keyManager = { sign: async (_s, _r, _a, data) => new Uint8Array(sign(null, data, privateKey)) };
const credential = { '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiableCredential'], issuer: did, issuanceDate: '2026-01-01T00:00:00Z', credentialSubject: { id: 'did:example:1' } };
const status = { id: 'http://127.0.0.1:3000/status-lists/r/d/0/w3c#7', type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '7', statusListCredential: 'http://127.0.0.1:3000/status-lists/r/d/0/w3c' };
const signed = await m.signCredential({ keyManager, scope: m.tenantScope('1'), key, credential: m.withCredentialStatus(credential, status), documentLoader: m.offlineDocumentLoader() });
const refused = await m.signCredential({ keyManager, scope: m.tenantScope('1'), key, credential: { ...credential, '@context': [...credential['@context'], 'https://example.com/ctx'] }, documentLoader: m.offlineDocumentLoader() }).catch((e) => e.code);
console.log(signed.proof.type, signed['@context'].includes('https://www.w3.org/ns/credentials/status/v1'), refused);
`);
        const run = spawnSync(NODE, [probe], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
        if (run.status !== 0 || run.stdout.trim() !== 'Ed25519Signature2020 true unknown_context') throw new Error(`the stack's bundle did not sign as expected: ${run.stdout}${run.stderr.slice(0, 400)}`);
      }
    }
    console.log('\nThe stack bundle, imported in a fresh process, made an Ed25519Signature2020 proof over a v1 credential with its revocation entry (the status context added) and refused an unknown context (unknown_context).');
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
