// The AnonCreds worker's key-generation seam for tests that are not about the maths: the two safe
// primes of the anoncreds-rs vector key (2p'+1, 2q'+1), so no prime search; everything else (S, the
// bases, the key-correctness proof) is drawn fresh. One integration run uses fresh primes.
import { systemRandomness, type ClRandomness } from '../../lib/anoncreds/cl';
import { clKeyGenerator, type KeyGenerator } from '../../lib/anoncreds/cred-def-worker';
import { loadVector } from './anoncreds-fixtures';

const vector = loadVector<{ credentialDefinitionPrivate: { value: { p_key: { p: string; q: string } } } }>('anoncreds-credential-definition.json');
export const VECTOR_SAFE_PRIMES: readonly [bigint, bigint] = [2n * BigInt(vector.credentialDefinitionPrivate.value.p_key.p) + 1n, 2n * BigInt(vector.credentialDefinitionPrivate.value.p_key.q) + 1n];

export function precomputedPrimesGenerator(): KeyGenerator {
  return (attributes) => {
    const primes = [...VECTOR_SAFE_PRIMES];
    const rand: ClRandomness = { ...systemRandomness, safePrime: async () => primes.shift()! };
    return clKeyGenerator(rand)(attributes);
  };
}
