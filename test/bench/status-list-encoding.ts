/**
 * Part of `npm run bench`: one 131,072-entry status list built, compressed and signed (local ES256
 * key) in each format, with the encoded sizes at 0 %, 1 % and 10 % of entries set; and the index
 * permutation's evaluation rate. One core, sequential.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { issuerSigner } from '../../lib/keys/signer';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import type { StatusSize } from '../../lib/status-lists/encoding';
import { listPermutation } from '../../lib/status-lists/permutation';
import { signIetfStatusListToken, signW3cStatusListCredential, type PublicationInput } from '../../lib/status-lists/tokens';
import { tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const LIST_SIZE = 131_072;
const RUNS = 20;
const DURATION_MS = (Number(process.env.BENCH_SECONDS ?? '10') * 1000) / 8;

function entries(statusSize: StatusSize, fraction: number): [number, number][] {
  const out = new Map<number, number>();
  while (out.size < Math.round(LIST_SIZE * fraction)) out.set(randomInt(LIST_SIZE), randomInt(1, 2 ** statusSize));
  return [...out];
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
}

function rate(fn: (i: number) => unknown): number {
  for (let i = 0; i < 1000; i++) fn(i); // warm-up
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < DURATION_MS) {
    for (let i = 0; i < 1000; i++) fn(n + i);
    n += 1000;
  }
  return n / ((performance.now() - t0) / 1000);
}

const payloadOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString());

async function main() {
  const km = new LocalKeyManager(new MemoryStore(), new LocalSecretDeriver('ab'.repeat(32)));
  const scope = tenantScope('1');
  const key = await km.create(scope, 'ES256');
  const signer = issuerSigner(km, scope, { ref: key.ref, alg: 'ES256' }, 'did:example:issuer#key-1');

  console.log('\n### Status lists: one 131,072-entry list built, compressed and signed (local ES256 key), one core\n');
  console.log(`Median of ${RUNS} runs. Sizes in characters: \`lst\` / \`encodedList\` and the whole compact JWS.\n`);
  console.log('| bits | entries set | IETF build+sign ms | W3C build+sign ms | IETF `lst` | IETF token | W3C `encodedList` | W3C token |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const statusSize of [1, 8] as const) {
    for (const fraction of [0, 0.01, 0.1]) {
      const input: PublicationInput = {
        url: 'https://status.example.com/w/1/lists/7',
        issuer: 'did:example:issuer',
        purpose: 'revocation',
        listSize: LIST_SIZE,
        statusSize,
        entries: entries(statusSize, fraction),
        issuedAt: new Date(),
        expiresAt: new Date(Date.now() + 86_400_000),
        ttlSeconds: 300,
      };
      const ietfMs = await median(() => signIetfStatusListToken(input, signer));
      const w3cMs = await median(() => signW3cStatusListCredential(input, signer));
      const ietf = await signIetfStatusListToken(input, signer);
      const w3c = await signW3cStatusListCredential(input, signer);
      console.log(
        `| ${statusSize} | ${fraction * 100} % | ${ietfMs.toFixed(2)} | ${w3cMs.toFixed(2)} | ${payloadOf(ietf).status_list.lst.length} | ${ietf.length} | ${payloadOf(w3c).credentialSubject.encodedList.length} | ${w3c.length} |`,
      );
    }
  }

  console.log('\n### Status lists: index permutation (8-round HMAC-SHA256 Feistel), one core\n');
  console.log('Cold: a new permutation and its first evaluation (what a request pays when nothing is cached). Warm: one permutation after a full pass (every round output remembered).\n');
  console.log('| list size | cold (new + 1 evaluation) /s | warm evaluations /s |');
  console.log('|---|---|---|');
  for (const bits of [17, 18, 24]) {
    const k = randomBytes(32);
    const cold = rate((i) => listPermutation(k, bits)(i % 2 ** bits));
    const p = listPermutation(k, bits);
    for (let c = 0; c < 2 ** bits; c++) p(c);
    const warm = rate((i) => p(i % 2 ** bits));
    console.log(`| 2^${bits} | ${cold.toFixed(0)} | ${warm.toFixed(0)} |`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
