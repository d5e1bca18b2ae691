/**
 * Part of `npm run bench` (`BENCH_ONLY=anoncreds-issuer npm run bench`): the AnonCreds issuer as its
 * worker and routes run it, against the in-memory store (test/helpers/memory-store.ts), one core:
 * - a credential definition's creation, `CredDefWorker.run` from a waiting record to the finished,
 *   published definition (two fresh 1,025-bit safe primes, the key-correctness proof, the sealed key,
 *   and with revocation the revocation keys, the registry with its tails file and status list, all in
 *   one store transaction), without revocation and with registries of 1,000, 4,096 (the API's
 *   largest, REGISTRY_LIMITS.maxRegistrySize) and 10,000 — past the API's limit, the record's size
 *   is set on the stored record before the worker runs — interleaved round by round;
 * - a revocation as the revoke route makes it, `RevocationRegistryStore.revoke` (γ opened, the
 *   accumulator updated, the new status list written with its version), at L = 1,000 and 10,000.
 * BENCH_ANONCREDS_RUNS rounds (20 by default), BENCH_ANONCREDS_SIZES (default "1000,4096,10000").
 */
import { performance } from 'node:perf_hooks';
import { clKeyGenerator, type KeyGenerator } from '../../lib/anoncreds/cred-def-worker';
import { parseObjectId } from '../../lib/anoncreds/identifiers';
import { REGISTRY_LIMITS, registryKeys } from '../../lib/anoncreds/registry';
import { RevocationRegistryStore } from '../../lib/anoncreds/revocation-registry';
import { tenantScope, type TenantScope } from '../../lib/store/keys';
import { anoncredsTestbed } from '../helpers/anoncreds-registry';
import { median, percentile, loadAverage } from './stats';

const RUNS = Number(process.env.BENCH_ANONCREDS_RUNS ?? '20');
const SIZES = (process.env.BENCH_ANONCREDS_SIZES ?? '1000,4096,10000').split(',').map(Number);
const BASE = 'https://agent.example.test/prod';
const SCHEMA = { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree', 'age', 'sex', 'height'] };

const row = (name: string, xs: number[], extra = '') =>
  console.log(`| ${name} | ${xs.length} | ${median(xs).toFixed(0)} | ${percentile(xs, 99).toFixed(0)} | ${Math.min(...xs).toFixed(0)} | ${Math.max(...xs).toFixed(0)} |${extra}`);

async function main() {
  // One store per run of the bench; each definition in a wallet of its own (a DID, a schema).
  // The worker's own generator (fresh safe primes), timed on its own to split the figure.
  let keyMs = 0;
  const fresh = clKeyGenerator();
  const generate: KeyGenerator = async (attributes) => {
    const t0 = performance.now();
    const keys = await fresh(attributes);
    keyMs = performance.now() - t0;
    return keys;
  };
  const { store, dids, registry, sealer, worker } = anoncredsTestbed({ generate, indyNamespace: 'bench' });
  let wallets = 0;
  const wallet = async (): Promise<{ scope: TenantScope; schemaId: string }> => {
    const scope = tenantScope(String(++wallets));
    const d = await dids.create(scope, { method: 'web', baseUrl: BASE });
    await dids.setPublic(scope, d.did);
    return { scope, schemaId: (await registry.createSchema(scope, BASE, SCHEMA)).schema_id };
  };
  const create = async (size: number | undefined) => {
    const { scope, schemaId } = await wallet();
    const allowed = size === undefined ? undefined : Math.min(size, REGISTRY_LIMITS.maxRegistrySize);
    const r = await registry.requestCredDef(scope, BASE, { schema_id: schemaId, tag: 'bench', support_revocation: size !== undefined, revocation_registry_size: allowed });
    if (size !== allowed) await store.write([{ type: 'update', key: registryKeys.credDef(scope, r.id), set: { revocation_registry_size: size } }]);
    const t0 = performance.now();
    const outcome = await worker.run(scope, { v: 1, wallet_id: scope.walletId, definition_id: r.id }, 1);
    const ms = performance.now() - t0;
    if (outcome !== 'finished') throw new Error(`the worker answered ${outcome}`);
    return { ms, keyMs, scope, id: r.id };
  };

  console.log(`\n### AnonCreds: credential definitions through the worker, revocations through the registry store (${process.version}, in-memory store)`);
  console.log(`load average at start: ${loadAverage()}\n`);
  const kinds: (number | undefined)[] = [undefined, ...SIZES];
  const label = (k: number | undefined) => (k === undefined ? 'without revocation' : `with revocation, L = ${k.toLocaleString('en')}`);
  const total = new Map(kinds.map((k) => [k, [] as number[]]));
  const keys = new Map(kinds.map((k) => [k, [] as number[]]));
  const last = new Map<number, { scope: TenantScope; id: string }>();
  for (let i = 0; i < RUNS; i++) {
    for (const k of kinds) {
      const r = await create(k);
      total.get(k)!.push(r.ms);
      keys.get(k)!.push(r.keyMs);
      if (k !== undefined) last.set(k, r);
    }
    console.error(`round ${i + 1}/${RUNS} done, load ${loadAverage()}`);
  }
  console.log('| credential definition (CredDefWorker.run) | runs | p50 ms | p99 ms | min ms | max ms | of which the primary keys (safe primes, key-correctness proof), p50 ms | the rest (revocation keys, registry, tails, sealing, store write), p50 ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const k of kinds) {
    const rest = total.get(k)!.map((t, j) => t - keys.get(k)![j]!);
    row(label(k), total.get(k)!, ` ${median(keys.get(k)!).toFixed(0)} | ${median(rest).toFixed(0)} |`);
  }
  console.log(`load average after the definitions: ${loadAverage()}\n`);

  const regs = new RevocationRegistryStore(store);
  console.log('| revocation (RevocationRegistryStore.revoke: γ opened, accumulator, status list JSON, conditional write of the registry and the list version) | runs | p50 ms | p99 ms | min ms | max ms |');
  console.log('|---|---|---|---|---|---|');
  for (const size of SIZES) {
    const { scope, id } = last.get(size)!;
    const cd = (await registry.getCredDef(scope, BASE, id)) as { revocation_registry: { revocation_registry_id: string } };
    const rid = parseObjectId(cd.revocation_registry.revocation_registry_id, 'revRegDef')!.resourceId;
    const indices: number[] = [];
    for (let n = 0; n < RUNS; n++) indices.push(await regs.allocateIndex(scope, rid));
    const times: number[] = [];
    for (const index of indices) {
      const t0 = performance.now();
      const r = await regs.revoke(scope, sealer, rid, [index]);
      times.push(performance.now() - t0);
      if (r.revoked[0] !== index) throw new Error(`index ${index} was not revoked`);
    }
    row(`one index, L = ${size.toLocaleString('en')}`, times);
  }
  console.log(`\nload average at the end: ${loadAverage()}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
