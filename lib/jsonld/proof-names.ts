/** The proof types and cryptosuites signing.ts makes, without its signing stack (contracts import these). */
export const PROOF_TYPES = ['Ed25519Signature2020', 'Ed25519Signature2018', 'DataIntegrityProof'] as const;
export type ProofType = (typeof PROOF_TYPES)[number];
export const CRYPTOSUITES = ['eddsa-rdfc-2022', 'ecdsa-rdfc-2019'] as const;
export type Cryptosuite = (typeof CRYPTOSUITES)[number];
export const DEFAULT_PROOF_TYPE: ProofType = 'Ed25519Signature2020';
