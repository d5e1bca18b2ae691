import type { AgentKeys } from '../../lib/didcomm/agent';
import { generateKeyPair, verkeyFromPublicKey, type Ed25519KeyPair } from '../../lib/didcomm/envelope';

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
