import type { AgentKeys } from '../../lib/didcomm/agent';
import { generateKeyPair, verkeyFromPublicKey, type Ed25519KeyPair } from '../../lib/didcomm/envelope';
import { PublicDidDidcomm } from '../../lib/didcomm/public-did';
import type { ItemStore } from '../../lib/store/port';

/** The key vault in memory, for the agent's unit tests: new Ed25519 keys per wallet, never sealed. */
export class MemoryVault implements AgentKeys {
  readonly pairs = new Map<string, Ed25519KeyPair>();
  async createKey(walletId: string) {
    const kp = generateKeyPair();
    const verkey = verkeyFromPublicKey(kp.publicKey);
    this.pairs.set(`${walletId}/${verkey}`, kp);
    return { verkey };
  }
  async keyPair(walletId: string, verkey: string) {
    return this.pairs.get(`${walletId}/${verkey}`);
  }
}

/**
 * The public DID's DIDComm service for DID tests on an in-memory store: keys in a {@link MemoryVault},
 * and a fixed public reference per wallet (`ref-<wallet id>`, padded to the 22 characters of a real one).
 */
export function memoryPublicDidDidcomm(store: ItemStore, vault = new MemoryVault()): PublicDidDidcomm {
  return new PublicDidDidcomm({ store, keys: vault, refs: { of: async (scope) => `ref-${scope.walletId}`.padEnd(22, '_') } });
}
