import { gcd, generatePrimeInRange, mod, modInverse, modPow } from '../../lib/anoncreds/bignum';
import {
  ClError,
  checkBlindedSecretsCorrectnessProof,
  credentialContext,
  issuerModPow,
  newKeyCorrectnessProof,
  newPrimaryKeys,
  signCredential,
  signPrimaryCredential,
  systemRandomness,
  type BlindedCredentialSecrets,
  type BlindedCredentialSecretsCorrectnessProof,
  type ClRandomness,
  type PrimaryPrivateKey,
  type PrimaryPublicKey,
} from '../../lib/anoncreds/cl';
import {
  holderVerifyKeyCorrectness,
  holderVerifyPrimarySignature,
  holderVerifySignatureCorrectness,
} from '../helpers/anoncreds-cl-holder';
import { CLS } from '../helpers/anoncreds-clsignatures-vectors';
import { loadVector } from '../helpers/anoncreds-fixtures';

const big = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, BigInt(v)]));

// ---- clsignatures mocks (test/helpers/anoncreds-clsignatures-vectors.ts) ----
const mockPk: PrimaryPublicKey = {
  n: BigInt(CLS.primaryPublicKey.n),
  s: BigInt(CLS.primaryPublicKey.s),
  rctxt: BigInt(CLS.primaryPublicKey.rctxt),
  z: BigInt(CLS.primaryPublicKey.z),
  r: big(CLS.primaryPublicKey.r),
};
const mockSk: PrimaryPrivateKey = { p: BigInt(CLS.primaryPrivateKey.p), q: BigInt(CLS.primaryPrivateKey.q) };
const mockValues = big(CLS.credentialValues);
const mockBlinded: BlindedCredentialSecrets = {
  u: BigInt(CLS.blindedCredentialSecrets.u),
  hidden_attributes: [...CLS.blindedCredentialSecrets.hidden_attributes],
  committed_attributes: {},
};
const mockBlindedProof: BlindedCredentialSecretsCorrectnessProof = {
  c: BigInt(CLS.blindedCredentialSecretsCorrectnessProof.c),
  v_dash_cap: BigInt(CLS.blindedCredentialSecretsCorrectnessProof.v_dash_cap),
  m_caps: big(CLS.blindedCredentialSecretsCorrectnessProof.m_caps),
  r_caps: {},
};
/** clsignatures' MockHelper: every random draw returns its fixed value. */
const mockedRandomness: ClRandomness = {
  ...systemRandomness,
  vPrimePrime: () => BigInt(CLS.mockedRandomness.v_prime_prime),
  primeE: () => BigInt(CLS.mockedRandomness.prime_in_range_e),
  randBelow: () => BigInt(CLS.mockedRandomness.rand_range),
};
const mockSignInput = {
  proverId: CLS.proverDid,
  blinded: mockBlinded,
  blindedProof: mockBlindedProof,
  credentialNonce: BigInt(CLS.credentialNonce),
  issuanceNonce: BigInt(CLS.credentialIssuanceNonce),
  values: mockValues,
  publicKey: mockPk,
  privateKey: mockSk,
};

// ---- anoncreds-rs vectors (test/helpers/anoncreds-vectors/) ----
interface RsCredDef {
  credentialDefinition: { value: { primary: { n: string; s: string; rctxt: string; z: string; r: Record<string, string> } } };
  credentialDefinitionPrivate: { value: { p_key: { p: string; q: string } } };
  keyCorrectnessProof: { c: string; xz_cap: string; xr_cap: [string, string][] };
}
const rsCredDef = loadVector<RsCredDef>('anoncreds-credential-definition.json');
const rsCred = loadVector<{
  values: Record<string, { raw: string; encoded: string }>;
  signature: { p_credential: { m_2: string; a: string; e: string; v: string } };
  signature_correctness_proof: { se: string; c: string };
}>('anoncreds-legacy-credential.json');
const rsReq = loadVector<{
  credentialRequest: {
    entropy: string;
    nonce: string;
    blinded_ms: { u: string; hidden_attributes: string[] };
    blinded_ms_correctness_proof: { c: string; v_dash_cap: string; m_caps: Record<string, string> };
  };
  credentialRequestMetadata: { link_secret_blinding_data: { v_prime: string } };
}>('anoncreds-credential-request.json');
const rsOffer = loadVector<{ nonce: string }>('anoncreds-credential-offer.json');
const rsLinkSecret = BigInt(loadVector<{ linkSecret: string }>('anoncreds-link-secret.json').linkSecret);

const rsPrimary = rsCredDef.credentialDefinition.value.primary;
const rsPk: PrimaryPublicKey = {
  n: BigInt(rsPrimary.n),
  s: BigInt(rsPrimary.s),
  rctxt: BigInt(rsPrimary.rctxt),
  z: BigInt(rsPrimary.z),
  r: big(rsPrimary.r),
};
const rsSk: PrimaryPrivateKey = big(rsCredDef.credentialDefinitionPrivate.value.p_key) as unknown as PrimaryPrivateKey;
const rsBlinded: BlindedCredentialSecrets = {
  u: BigInt(rsReq.credentialRequest.blinded_ms.u),
  hidden_attributes: rsReq.credentialRequest.blinded_ms.hidden_attributes,
  committed_attributes: {},
};
const rsBlindedProof: BlindedCredentialSecretsCorrectnessProof = {
  c: BigInt(rsReq.credentialRequest.blinded_ms_correctness_proof.c),
  v_dash_cap: BigInt(rsReq.credentialRequest.blinded_ms_correctness_proof.v_dash_cap),
  m_caps: big(rsReq.credentialRequest.blinded_ms_correctness_proof.m_caps),
  r_caps: {},
};
const vPrime = BigInt(rsReq.credentialRequestMetadata.link_secret_blinding_data.v_prime);
const rsEncoded = Object.fromEntries(Object.entries(rsCred.values).map(([k, v]) => [k, BigInt(v.encoded)]));
/** What the holder knows: every attribute value plus its link secret under the key's name for it. */
const holderValues = (encoded: Record<string, bigint>) => ({ ...encoded, master_secret: rsLinkSecret });
const rsSig = big(rsCred.signature.p_credential) as { m_2: bigint; a: bigint; e: bigint; v: bigint };

describe('clsignatures deterministic vectors', () => {
  it('credential context m₂ (generate_context_attribute_works)', () => {
    expect(credentialContext(CLS.credentialContext.prover_id, CLS.credentialContext.rev_idx).toString()).toBe(
      CLS.credentialContext.expected,
    );
  });

  it('_sign_primary_credential reproduces the mock primary credential (sign_primary_credential_works)', () => {
    const pc = CLS.primaryCredential;
    const { a, q } = signPrimaryCredential(mockPk, mockSk, BigInt(CLS.m2), mockValues, BigInt(pc.v), mockBlinded, BigInt(pc.e));
    expect(a.toString()).toBe(pc.a);
    expect(q).toBe(modPow(BigInt(pc.a), BigInt(pc.e), mockPk.n));
  });

  it('sign_credential with mocked randomness reproduces signature and correctness proof (sign_credential_signature_works)', () => {
    const { signature, correctnessProof } = signCredential(mockSignInput, mockedRandomness);
    const ex = CLS.signCredentialExpected;
    expect({
      m_2: signature.m_2.toString(),
      a: signature.a.toString(),
      e: signature.e.toString(),
      v: signature.v.toString(),
      se: correctnessProof.se.toString(),
      c: correctnessProof.c.toString(),
    }).toEqual(ex);
  });

  it('the mock blinded-secrets proof verifies against its nonce and fails when tampered', () => {
    expect(() =>
      checkBlindedSecretsCorrectnessProof(mockBlinded, mockBlindedProof, BigInt(CLS.credentialNonce), mockPk),
    ).not.toThrow();
    expect(() =>
      checkBlindedSecretsCorrectnessProof(mockBlinded, mockBlindedProof, BigInt(CLS.credentialNonce) + 1n, mockPk),
    ).toThrow(ClError);
    const tampered = { ...mockBlindedProof, v_dash_cap: mockBlindedProof.v_dash_cap + 1n };
    expect(() => checkBlindedSecretsCorrectnessProof(mockBlinded, tampered, BigInt(CLS.credentialNonce), mockPk)).toThrow(
      ClError,
    );
  });

  it('the mock key correctness proof verifies with the spec-written holder check', () => {
    const kcp = CLS.keyCorrectnessProof;
    const proof = { c: BigInt(kcp.c), xz_cap: BigInt(kcp.xz_cap), xr_cap: kcp.xr_cap.map(([k, v]) => [k, BigInt(v)] as [string, bigint]) };
    expect(holderVerifyKeyCorrectness(mockPk, proof)).toBe(true);
    expect(holderVerifyKeyCorrectness(mockPk, { ...proof, xz_cap: proof.xz_cap + 1n })).toBe(false);
  });
});

describe('anoncreds-rs credential vector, checked from the specification', () => {
  const full = { ...rsSig, v: rsSig.v + vPrime }; // the holder completes v = v' + v''
  const rsProof = big(rsCred.signature_correctness_proof) as { se: bigint; c: bigint };
  const rsNonce = BigInt(rsReq.credentialRequest.nonce);

  it('the credential satisfies Z ≡ A^e·S^v·Rctxt^m₂·∏R_i^m_i and its correctness proof verifies', () => {
    expect(holderVerifyPrimarySignature(rsPk, full, holderValues(rsEncoded))).toBe(true);
    expect(holderVerifySignatureCorrectness(rsPk, full, rsProof, rsNonce, holderValues(rsEncoded))).toBe(true);
    expect(credentialContext(rsReq.credentialRequest.entropy, 9)).toBe(rsSig.m_2);
  });

  it('a tampered attribute, link secret or signature fails', () => {
    const tampered = holderValues({ ...rsEncoded, age: rsEncoded.age! + 1n });
    expect(holderVerifyPrimarySignature(rsPk, full, tampered)).toBe(false);
    expect(holderVerifySignatureCorrectness(rsPk, full, rsProof, rsNonce, tampered)).toBe(false);
    expect(holderVerifyPrimarySignature(rsPk, full, { ...rsEncoded, master_secret: rsLinkSecret + 1n })).toBe(false);
    expect(holderVerifyPrimarySignature(rsPk, { ...full, a: full.a + 1n }, holderValues(rsEncoded))).toBe(false);
    expect(holderVerifySignatureCorrectness(rsPk, full, rsProof, rsNonce + 1n, holderValues(rsEncoded))).toBe(false);
  });

  it('its key correctness proof verifies', () => {
    const kcp = rsCredDef.keyCorrectnessProof;
    const proof = { c: BigInt(kcp.c), xz_cap: BigInt(kcp.xz_cap), xr_cap: kcp.xr_cap.map(([k, v]) => [k, BigInt(v)] as [string, bigint]) };
    expect(holderVerifyKeyCorrectness(rsPk, proof)).toBe(true);
  });

  it('the anoncreds-rs request blinded-secrets proof verifies against the offer nonce', () => {
    expect(() => checkBlindedSecretsCorrectnessProof(rsBlinded, rsBlindedProof, BigInt(rsOffer.nonce), rsPk)).not.toThrow();
    expect(() => checkBlindedSecretsCorrectnessProof(rsBlinded, rsBlindedProof, rsNonce, rsPk)).toThrow(ClError);
  });
});

describe('issuing with our code to the anoncreds-rs holder', () => {
  const input = {
    proverId: rsReq.credentialRequest.entropy,
    blinded: rsBlinded,
    blindedProof: rsBlindedProof,
    credentialNonce: BigInt(rsOffer.nonce),
    issuanceNonce: BigInt(rsReq.credentialRequest.nonce),
    values: rsEncoded,
    publicKey: rsPk,
    privateKey: rsSk,
  };

  it('a fresh credential verifies with the holder check and its link secret; tampering fails', () => {
    const { signature, correctnessProof } = signCredential(input);
    const full = { ...signature, v: signature.v + vPrime };
    expect(holderVerifyPrimarySignature(rsPk, full, holderValues(rsEncoded))).toBe(true);
    expect(holderVerifySignatureCorrectness(rsPk, full, correctnessProof, input.issuanceNonce, holderValues(rsEncoded))).toBe(
      true,
    );
    expect(holderVerifyPrimarySignature(rsPk, full, holderValues({ ...rsEncoded, name: 1n }))).toBe(false);
    // A second issuance draws new e, v: a different signature.
    expect(signCredential(input).signature.e).not.toBe(signature.e);
  });

  it('signs negative encoded values (raw "-5" encodes to −5) as clsignatures does', () => {
    const values = { ...rsEncoded, age: -5n };
    const { signature } = signCredential({ ...input, values });
    expect(holderVerifyPrimarySignature(rsPk, { ...signature, v: signature.v + vPrime }, holderValues(values))).toBe(true);
    expect(holderVerifyPrimarySignature(rsPk, { ...signature, v: signature.v + vPrime }, holderValues({ ...values, age: 5n }))).toBe(false);
  });

  it('refuses a missing, unknown or doubly given attribute and a bad blinded-secrets proof', () => {
    const { age: _age, ...missing } = rsEncoded;
    expect(() => signCredential({ ...input, values: missing })).toThrow("credential attribute 'age' value not provided");
    expect(() => signCredential({ ...input, values: { ...rsEncoded, extra: 1n } })).toThrow(ClError);
    expect(() => signCredential({ ...input, values: { ...rsEncoded, master_secret: 1n } })).toThrow(ClError);
    expect(() => signCredential({ ...input, credentialNonce: input.credentialNonce + 1n })).toThrow(ClError);
    expect(() => signCredential({ ...input, blinded: { ...rsBlinded, u: 0n } })).toThrow(ClError);
  });
});

describe('credential definition primary keys', () => {
  // Safe primes from the anoncreds-rs key (2p'+1, 2q'+1) so the test needs no prime search; the
  // rest of key generation uses real randomness.
  const safe = [2n * rsSk.p + 1n, 2n * rsSk.q + 1n];
  const rand: ClRandomness = { ...systemRandomness, safePrime: async () => safe.shift()! };

  it('generates a key whose correctness proof the holder accepts, and signs with it', async () => {
    const attrs = ['name', 'age'];
    const { publicKey, privateKey, metadata } = await newPrimaryKeys(attrs, ['master_secret'], rand);
    expect(Object.keys(publicKey.r).sort()).toEqual(['age', 'master_secret', 'name']);
    expect(publicKey.n).toBe(rsPk.n);
    const proof = newKeyCorrectnessProof(publicKey, privateKey, metadata);
    expect(holderVerifyKeyCorrectness(publicKey, proof)).toBe(true);
    expect(holderVerifyKeyCorrectness(publicKey, { ...proof, c: proof.c + 1n })).toBe(false);
    // Z and R_i are powers of S with the recorded exponents.
    expect(modPow(publicKey.s, metadata.xz, publicKey.n)).toBe(publicKey.z);

    // Issue with a holder-side blinding computed here from the spec: U = S^v' · R_ms^ls.
    const v1 = 12345678901234567890n;
    const ls = 987654321n;
    const u = (modPow(publicKey.s, v1, publicKey.n) * modPow(publicKey.r.master_secret!, ls, publicKey.n)) % publicKey.n;
    const values = { name: 42n, age: 7n };
    const e = generatePrimeInRange(596, 119);
    const v = systemRandomness.vPrimePrime();
    const { a } = signPrimaryCredential(publicKey, privateKey, 5n, values, v, { u, hidden_attributes: ['master_secret'], committed_attributes: {} }, e);
    expect(holderVerifyPrimarySignature(publicKey, { m_2: 5n, a, e, v: v + v1 }, { ...values, master_secret: ls })).toBe(true);
  });

  it('refuses an empty or duplicated attribute list', async () => {
    await expect(newPrimaryKeys([], ['master_secret'], rand)).rejects.toThrow(ClError);
    await expect(newPrimaryKeys(['a', 'a'], ['master_secret'], rand)).rejects.toThrow(ClError);
    await expect(newPrimaryKeys(['__proto__'], ['master_secret'], rand)).rejects.toThrow(ClError);
    await expect(newPrimaryKeys([''], ['master_secret'], rand)).rejects.toThrow(ClError);
  });

  it('never pairs a safe prime with itself', async () => {
    const primes = [2n * rsSk.p + 1n, 2n * rsSk.p + 1n, 2n * rsSk.q + 1n];
    const { publicKey } = await newPrimaryKeys(['a'], ['master_secret'], { ...systemRandomness, safePrime: async () => primes.shift()! });
    expect(publicKey.n).toBe(rsPk.n);
  });
});

describe('issuer CRT exponentiation', () => {
  it('equals modPow on n, including edge exponents and bases sharing a factor', () => {
    const n = rsPk.n;
    const P = 2n * rsSk.p + 1n;
    for (const [b, e] of [
      [rsPk.s, 2n ** 2723n + 99n],
      [rsPk.z, 0n],
      [rsPk.z, 1n],
      [P * 3n, 65537n],
      [P * 3n, 0n],
      [n - 1n, 2n * rsSk.p * rsSk.q + 1n],
      [rsPk.s, -2147483648n],
    ] as [bigint, bigint][]) {
      expect(issuerModPow(b, e, rsSk)).toBe(modPow(b, e, n));
    }
  });

  it('refuses a private key that does not match, and a non-invertible U', () => {
    const input = {
      proverId: 'x',
      blinded: rsBlinded,
      blindedProof: rsBlindedProof,
      credentialNonce: BigInt(rsOffer.nonce),
      issuanceNonce: 1n,
      values: rsEncoded,
      publicKey: rsPk,
      privateKey: { p: rsSk.p, q: rsSk.q + 2n },
    };
    expect(() => signCredential(input)).toThrow('private key does not match');
    const P = 2n * rsSk.p + 1n;
    expect(() =>
      signPrimaryCredential(rsPk, rsSk, 1n, rsEncoded, 5n, { ...rsBlinded, u: P }, generatePrimeInRange(596, 119)),
    ).toThrow(ClError);
  });

  it('refuses to release A when A^e ≠ Q: a Q outside the quadratic residues would leak the factorization', () => {
    // U·g with g ≡ −1 (mod P), 1 (mod Q): then Q' = Q·g⁻¹ and Q'^(p'q') is a non-trivial square root
    // of 1; when e·e⁻¹ = 1 + j·p'q' with j odd, the unchecked A would satisfy A^e = Q'·√1, and
    // gcd(A^e/Q' − 1, n) would factor n.
    const n = rsPk.n;
    const P = 2n * rsSk.p + 1n;
    const Q = 2n * rsSk.q + 1n;
    const order = rsSk.p * rsSk.q;
    const g = mod(1n + Q * mod(-2n * modInverse(Q, P), P), n);
    let e: bigint;
    do e = generatePrimeInRange(596, 119);
    while (((modInverse(e, order) * e - 1n) / order) % 2n !== 1n);
    const qPrime = mod(rsPk.z * modInverse(modPow(rsPk.s, 5n, n) * mod(rsBlinded.u * g, n), n), n);
    const unchecked = modPow(qPrime, modInverse(e, order), n);
    // What a holder could do with the unchecked A: a factor of n.
    expect(gcd(mod(modPow(unchecked, e, n) * modInverse(qPrime, n), n) - 1n, n)).toBe(Q);
    expect(() =>
      signPrimaryCredential(rsPk, rsSk, 0n, {}, 5n, { ...rsBlinded, u: mod(rsBlinded.u * g, n) }, e),
    ).toThrow('does not yield a valid signature');
  });
});
