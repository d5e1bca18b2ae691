/**
 * Part of `npm run bench`: signing through the key-manager port (local adapter: sealed keys, opened
 * once and cached) next to node's crypto.sign on the same keys, on one core (sequential calls).
 */
import { sign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { issuerSigner, signCompactJws } from '../../lib/keys/signer';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const DURATION_MS = Number(process.env.BENCH_SECONDS ?? '10') * 1000 / 4;

async function rate(fn: () => unknown | Promise<unknown>): Promise<number> {
  for (let i = 0; i < 500; i++) await fn(); // warm-up
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < DURATION_MS) {
    for (let i = 0; i < 100; i++) await fn();
    n += 100;
  }
  return n / ((performance.now() - t0) / 1000);
}

async function main() {
  const store = new MemoryStore();
  const secrets = new LocalSecretDeriver('ab'.repeat(32));
  const km = new LocalKeyManager(store, secrets);
  const scope = tenantScope('1');
  const input = Buffer.from(`${Buffer.from('{"alg":"EdDSA","typ":"dc+sd-jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: 'did:example:1', vct: 'urn:x', _sd: Array(8).fill('x'.repeat(43)) })).toString('base64url')}`);

  console.log('\n### Signing: key-manager port (local adapter) vs. raw crypto.sign, one core\n');
  console.log(`Signing input ${input.length} bytes (an SD-JWT-sized header.payload).\n`);
  console.log('| algorithm | raw crypto.sign /s | port sign /s | ratio | port + compact JWS assembly /s |');
  console.log('|---|---|---|---|---|');
  for (const alg of ['EdDSA', 'ES256'] as const) {
    const key = await km.create(scope, alg);
    // The same private key, opened outside the port, for the raw baseline.
    const fresh = new LocalKeyManager(store, secrets);
    await fresh.sign(scope, key.ref, alg, input);
    const priv = (fresh as unknown as { cache: Map<string, import('node:crypto').KeyObject> }).cache.get(`${scope.walletId}|${key.ref}`)!;
    const raw = await rate(() => (alg === 'EdDSA' ? sign(null, input, priv) : sign('sha256', input, { key: priv, dsaEncoding: 'ieee-p1363' })));
    const port = await rate(() => km.sign(scope, key.ref, alg, input));
    const signer = issuerSigner(km, scope, { ref: key.ref, alg }, 'did:example:1#key-1');
    const jws = await rate(() => signCompactJws(signer, { typ: 'dc+sd-jwt' }, { iss: 'did:example:1', vct: 'urn:x' }));
    console.log(`| ${alg} | ${raw.toFixed(0)} | ${port.toFixed(0)} | ${(port / raw).toFixed(2)} | ${jws.toFixed(0)} |`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
