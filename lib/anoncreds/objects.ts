// The AnonCreds JSON objects around the CL primitives, in anoncreds-rs' shapes: the credential
// definition's primary key, the key-correctness proof, the credential offer, the credential request
// (parsed and bounded before any arithmetic) and the issued credential (with or without revocation;
// the revocation objects themselves are in revocation.ts).

import * as z from 'zod';
import { encodeAttribute, randomBits } from './bignum';
import { CurveError, g1FromString, type G1Point } from './bn254';
import { attrName, credentialRequestSchema, decimalString, NONCE_BITS, nonceString } from './request-shape';
import {
  signCredential,
  systemRandomness,
  type ClRandomness,
  type KeyCorrectnessProof,
  type PrimaryPrivateKey,
  type PrimaryPublicKey,
} from './cl';
import {
  signNonRevocation,
  systemRevocationRandomness,
  type NonRevocationIssuance,
  type RevocationPrivateKey,
  type RevocationPublicKey,
  type RevocationRandomness,
  type RevocationStatusList,
} from './revocation';

export class AnonCredsFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnonCredsFormatError';
  }
}

export { NONCE_BITS } from './request-shape';

const decimal = decimalString.transform((s) => BigInt(s));
const nonce = nonceString.transform((s) => BigInt(s));
const decimalMap = z.record(attrName, decimal);

/** anoncreds-rs `attr_common_view`: attribute names match with spaces removed, in lower case. */
export function attrCommonView(name: string): string {
  return name.replaceAll(' ', '').toLowerCase();
}

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const path = issue.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new AnonCredsFormatError(`invalid ${what}${path}: ${issue.message}`);
  }
  return r.data;
}

const dec = (v: bigint) => v.toString();
const decMap = (o: Record<string, bigint>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, dec(v)]));

export interface PrimaryPublicKeyJson {
  n: string;
  s: string;
  r: Record<string, string>;
  rctxt: string;
  z: string;
}

/** The `value.primary` object of a credential definition. */
export function primaryPublicKeyToJson(pk: PrimaryPublicKey): PrimaryPublicKeyJson {
  return { n: dec(pk.n), s: dec(pk.s), r: decMap(pk.r), rctxt: dec(pk.rctxt), z: dec(pk.z) };
}

export function parsePrimaryPublicKey(json: unknown): PrimaryPublicKey {
  const v = parse(
    z.object({ n: decimal, s: decimal, r: decimalMap, rctxt: decimal, z: decimal }),
    json,
    'credential definition primary key',
  );
  return { n: v.n, s: v.s, r: v.r, rctxt: v.rctxt, z: v.z };
}

export interface KeyCorrectnessProofJson {
  c: string;
  xz_cap: string;
  xr_cap: [string, string][];
}

export function keyCorrectnessProofToJson(p: KeyCorrectnessProof): KeyCorrectnessProofJson {
  return { c: dec(p.c), xz_cap: dec(p.xz_cap), xr_cap: p.xr_cap.map(([k, v]) => [k, dec(v)]) };
}

export function parseKeyCorrectnessProof(json: unknown): KeyCorrectnessProof {
  return parse(
    z.object({ c: decimal, xz_cap: decimal, xr_cap: z.array(z.tuple([attrName, decimal])).max(1000) }),
    json,
    'key correctness proof',
  );
}

/** anoncreds-rs `Nonce::new`: 80 random bits, in decimal. */
export function newNonce(): string {
  return randomBits(NONCE_BITS).toString();
}

export interface CredentialOfferJson {
  schema_id: string;
  cred_def_id: string;
  key_correctness_proof: KeyCorrectnessProofJson;
  nonce: string;
}

export function createCredentialOffer(input: {
  schemaId: string;
  credDefId: string;
  keyCorrectnessProof: KeyCorrectnessProof;
}): CredentialOfferJson {
  return {
    schema_id: input.schemaId,
    cred_def_id: input.credDefId,
    key_correctness_proof: keyCorrectnessProofToJson(input.keyCorrectnessProof),
    nonce: newNonce(),
  };
}

const requestSchema = credentialRequestSchema(decimal, nonce);

export type CredentialRequest = z.output<typeof requestSchema>;

export function parseCredentialRequest(json: unknown): CredentialRequest {
  return parse(requestSchema, json, 'credential request');
}

export interface CredentialJson {
  schema_id: string;
  cred_def_id: string;
  rev_reg_id: string | null;
  values: Record<string, { raw: string; encoded: string }>;
  signature: {
    p_credential: { m_2: string; a: string; e: string; v: string };
    r_credential: NonRevocationIssuance['r_credential'] | null;
  };
  signature_correctness_proof: { se: string; c: string };
  rev_reg: NonRevocationIssuance['rev_reg'] | null;
  witness: NonRevocationIssuance['witness'] | null;
}

/** What a revocable credential needs: the registry, the index allocated to it, the current status list. */
export interface CredentialRevocationInput {
  revRegId: string;
  revIdx: number;
  publicKey: RevocationPublicKey;
  privateKey: RevocationPrivateKey;
  gamma: bigint;
  statusList: RevocationStatusList;
}

function blindedRevocationSecret(ur: unknown): G1Point {
  if (ur === undefined || ur === null) throw new AnonCredsFormatError('credential request has no blinded revocation secret (ur)');
  try {
    return g1FromString(ur);
  } catch (e) {
    if (e instanceof CurveError) throw new AnonCredsFormatError(`invalid blinded revocation secret: ${e.message}`);
    throw e;
  }
}

/**
 * anoncreds-rs `create_credential`: checks the request against our offer, encodes the raw values,
 * signs; with `revocation`, also the non-revocation part (issuance by default: the status list does
 * not change). `offer` is the offer we made (its nonce binds the holder's proof).
 */
export function createCredential(
  input: {
    publicKey: PrimaryPublicKey;
    privateKey: PrimaryPrivateKey;
    offer: CredentialOfferJson;
    request: unknown;
    /** Raw attribute values by name; names match the schema after `attrCommonView`. */
    values: Record<string, string>;
    revocation?: CredentialRevocationInput;
  },
  rand: ClRandomness = systemRandomness,
  revocationRand: RevocationRandomness = systemRevocationRandomness,
): CredentialJson {
  const req = parseCredentialRequest(input.request);
  const rev = input.revocation;
  // Checked before the (costly) primary signature.
  const ur = rev ? blindedRevocationSecret(req.blinded_ms.ur) : undefined;
  if (rev) {
    const L = rev.statusList.revoked.length;
    if (!Number.isInteger(rev.revIdx) || rev.revIdx < 1 || rev.revIdx > L - 1) {
      throw new AnonCredsFormatError(`revocation index must be an integer in [1, ${L - 1}]`);
    }
    if (rev.statusList.revoked[rev.revIdx]) throw new AnonCredsFormatError(`revocation index ${rev.revIdx} is revoked`);
  }
  if (req.cred_def_id !== input.offer.cred_def_id) {
    throw new AnonCredsFormatError('credential request is for another credential definition');
  }
  const { n } = input.publicKey;
  if (req.blinded_ms.u <= 0n || req.blinded_ms.u >= n) throw new AnonCredsFormatError('blinded secret out of range');
  const encoded: Record<string, bigint> = {};
  const values: CredentialJson['values'] = {};
  for (const [name, raw] of Object.entries(input.values)) {
    if (typeof raw !== 'string') throw new AnonCredsFormatError(`attribute '${name}' must be a string`);
    const key = attrCommonView(name);
    if (key === '__proto__') throw new AnonCredsFormatError('invalid attribute name');
    if (Object.hasOwn(encoded, key)) throw new AnonCredsFormatError(`attribute '${name}' given twice`);
    const enc = encodeAttribute(raw);
    encoded[key] = BigInt(enc);
    values[name] = { raw, encoded: enc };
  }
  const { signature, correctnessProof } = signCredential(
    {
      proverId: (req.entropy ?? req.prover_did)!,
      blinded: {
        u: req.blinded_ms.u,
        hidden_attributes: req.blinded_ms.hidden_attributes,
        committed_attributes: req.blinded_ms.committed_attributes ?? {},
      },
      blindedProof: {
        c: req.blinded_ms_correctness_proof.c,
        v_dash_cap: req.blinded_ms_correctness_proof.v_dash_cap,
        m_caps: req.blinded_ms_correctness_proof.m_caps,
        r_caps: req.blinded_ms_correctness_proof.r_caps ?? {},
      },
      credentialNonce: BigInt(input.offer.nonce),
      issuanceNonce: req.nonce,
      values: encoded,
      publicKey: input.publicKey,
      privateKey: input.privateKey,
      ...(rev ? { revIdx: rev.revIdx } : {}),
    },
    rand,
  );
  const nonRevocation =
    rev && ur
      ? signNonRevocation(
          {
            revIdx: rev.revIdx,
            credentialContext: signature.m_2,
            ur,
            publicKey: rev.publicKey,
            privateKey: rev.privateKey,
            gamma: rev.gamma,
            statusList: rev.statusList,
          },
          revocationRand,
        )
      : undefined;
  return {
    schema_id: input.offer.schema_id,
    cred_def_id: input.offer.cred_def_id,
    rev_reg_id: rev ? rev.revRegId : null,
    values,
    signature: {
      p_credential: { m_2: dec(signature.m_2), a: dec(signature.a), e: dec(signature.e), v: dec(signature.v) },
      r_credential: nonRevocation ? nonRevocation.r_credential : null,
    },
    signature_correctness_proof: { se: dec(correctnessProof.se), c: dec(correctnessProof.c) },
    rev_reg: nonRevocation ? nonRevocation.rev_reg : null,
    witness: nonRevocation ? nonRevocation.witness : null,
  };
}
