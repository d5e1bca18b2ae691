// The shape and bounds of an anoncreds-rs credential request, in zod alone: the inbound DIDComm
// worker checks a request with it before anything is stored (and must not carry the CL arithmetic:
// its bundle budget), and the issuing half parses the same shape into BigInts before it signs.
import * as z from 'zod';

/** clsignatures LARGE_NONCE: nonces are 80 random bits. */
export const NONCE_BITS = 80;

// Bounds on decimal strings, so a caller cannot make us parse or exponentiate huge numbers. The
// largest honest values are the proofs' responses (v_dash_cap ≈ 3,200 bits ≈ 970 digits).
const MAX_DIGITS = 1200;
export const decimalString = z.string().regex(new RegExp(`^(0|[1-9][0-9]{0,${MAX_DIGITS - 1}})$`), 'a non-negative decimal integer');
export const nonceString = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,29})$/, 'a decimal nonce')
  // zod runs this check even when the pattern failed: convert only what the pattern allows.
  .refine((s) => !/^[0-9]{1,30}$/.test(s) || BigInt(s) < 1n << BigInt(NONCE_BITS), 'a nonce of at most 80 bits');
// zod drops a '__proto__' key from records, so parsed maps never carry one.
export const attrName = z.string().min(1).max(256);

/**
 * anoncreds-rs `CredentialRequest`, over the given number schemas (strings for the structural check,
 * BigInt transforms for the issuer). The blinded revocation secret `ur` stays a bounded string: it is
 * parsed as a G1 point only when the definition is revocable.
 */
export function credentialRequestSchema<D extends z.ZodType, N extends z.ZodType>(decimal: D, nonce: N) {
  const decimalMap = z.record(attrName, decimal);
  return z
    .object({
      entropy: z.string().min(1).max(1024).optional(),
      prover_did: z.string().min(1).max(1024).optional(),
      cred_def_id: z.string().min(1).max(2048),
      blinded_ms: z.object({
        u: decimal,
        ur: z.string().max(1024).nullish(),
        hidden_attributes: z.array(attrName).max(16),
        committed_attributes: decimalMap.optional(),
      }),
      blinded_ms_correctness_proof: z.object({ c: decimal, v_dash_cap: decimal, m_caps: decimalMap, r_caps: decimalMap.optional() }),
      nonce,
    })
    .refine((r) => (r.entropy === undefined) !== (r.prover_did === undefined), 'exactly one of entropy and prover_did');
}
