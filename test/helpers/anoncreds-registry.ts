// The AnonCreds worker's key-generation seam for tests that are not about the maths: the two safe
// primes of the anoncreds-rs vector key (2p'+1, 2q'+1), so no prime search; everything else (S, the
// bases, the key-correctness proof) is drawn fresh. One integration run uses fresh primes.
import { systemRandomness, type ClRandomness } from '../../lib/anoncreds/cl';
import { clKeyGenerator, CredDefWorker, type KeyGenerator } from '../../lib/anoncreds/cred-def-worker';
import { AnonCredsRegistry } from '../../lib/anoncreds/registry';
import { CredDefKeySealer } from '../../lib/anoncreds/sealed-keys';
import { LocalDataKeys, WalletDataKeys } from '../../lib/didcomm/key-vault';
import { DidService } from '../../lib/dids/service';
import { OutboxPublisher } from '../../lib/events/publisher';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { TaaService } from '../../lib/taa/service';
import { loadVector } from './anoncreds-fixtures';
import { memoryPublicDidDidcomm, MemoryVault } from './didcomm-memory-vault';
import { MemoryStore } from './memory-store';

const vector = loadVector<{ credentialDefinitionPrivate: { value: { p_key: { p: string; q: string } } } }>('anoncreds-credential-definition.json');
export const VECTOR_SAFE_PRIMES: readonly [bigint, bigint] = [2n * BigInt(vector.credentialDefinitionPrivate.value.p_key.p) + 1n, 2n * BigInt(vector.credentialDefinitionPrivate.value.p_key.q) + 1n];

export function precomputedPrimesGenerator(): KeyGenerator {
  return (attributes) => {
    const primes = [...VECTOR_SAFE_PRIMES];
    const rand: ClRandomness = { ...systemRandomness, safePrime: async () => primes.shift()! };
    return clKeyGenerator(rand)(attributes);
  };
}

/**
 * The AnonCreds registry's collaborators over one in-memory store, as the unit tests and the bench
 * wire them: DIDs, the outbox, the registry, the sealer under local data keys, and the definition
 * worker (`generate` defaults to the precomputed primes; `now`, when given, drives the outbox and worker).
 */
export function anoncredsTestbed(opts: { generate?: KeyGenerator; now?: () => Date; indyNamespace?: string } = {}) {
  const store = new MemoryStore();
  const secrets = new LocalSecretDeriver('ab'.repeat(32));
  const dids = new DidService({
    store,
    keyManager: new LocalKeyManager(store, secrets),
    taa: new TaaService(store, undefined),
    indyNamespace: opts.indyNamespace ?? 'test',
    limits: { maxDids: 100, maxCreationsPerMinute: 100 },
    didcomm: memoryPublicDidDidcomm(store, new MemoryVault()),
  });
  const events = new OutboxPublisher(store, opts.now);
  const registry = new AnonCredsRegistry({ store, events });
  const sealer = new CredDefKeySealer(new WalletDataKeys(store, new LocalDataKeys(secrets), 'anoncreds'));
  const worker = new CredDefWorker({ store, events, sealer, generate: opts.generate ?? precomputedPrimesGenerator(), maxReceives: 3, ...(opts.now ? { now: opts.now } : {}) });
  return { store, secrets, dids, events, registry, sealer, worker };
}
