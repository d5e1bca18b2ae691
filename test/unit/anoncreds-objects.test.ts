import { ClError, type PrimaryPrivateKey } from '../../lib/anoncreds/cl';
import {
  AnonCredsFormatError,
  NONCE_BITS,
  attrCommonView,
  createCredential,
  createCredentialOffer,
  parseCredentialRequest,
  parseKeyCorrectnessProof,
  parsePrimaryPublicKey,
  primaryPublicKeyToJson,
  keyCorrectnessProofToJson,
} from '../../lib/anoncreds/objects';
import {
  holderVerifyKeyCorrectness,
  holderVerifyPrimarySignature,
  holderVerifySignatureCorrectness,
} from '../helpers/anoncreds-cl-holder';
import { loadVector } from '../helpers/anoncreds-fixtures';

// anoncreds-rs vectors (test/helpers/anoncreds-vectors/, see SOURCE.md there)
const credDef = loadVector<{
  credentialDefinition: { value: { primary: unknown } };
  credentialDefinitionPrivate: { value: { p_key: { p: string; q: string } } };
  keyCorrectnessProof: unknown;
}>('anoncreds-credential-definition.json');
const offerVector = loadVector<{ schema_id: string; cred_def_id: string; key_correctness_proof: unknown; nonce: string }>(
  'anoncreds-credential-offer.json',
);
const reqVector = loadVector<{
  credentialRequest: Record<string, unknown> & { nonce: string; blinded_ms: { u: string } };
  credentialRequestMetadata: { link_secret_blinding_data: { v_prime: string } };
}>('anoncreds-credential-request.json');
const credVector = loadVector<Record<string, unknown> & { values: Record<string, { raw: string; encoded: string }> }>(
  'anoncreds-legacy-credential.json',
);
const linkSecret = BigInt(loadVector<{ linkSecret: string }>('anoncreds-link-secret.json').linkSecret);

const pk = parsePrimaryPublicKey(credDef.credentialDefinition.value.primary);
const sk: PrimaryPrivateKey = {
  p: BigInt(credDef.credentialDefinitionPrivate.value.p_key.p),
  q: BigInt(credDef.credentialDefinitionPrivate.value.p_key.q),
};
const rawValues = Object.fromEntries(Object.entries(credVector.values).map(([k, v]) => [k, v.raw]));
const request = reqVector.credentialRequest;
const offer = offerVector as Parameters<typeof createCredential>[0]['offer'];

describe('AnonCreds JSON objects', () => {
  it('parse and re-serialize the anoncreds-rs primary key and key correctness proof unchanged', () => {
    expect(primaryPublicKeyToJson(pk)).toEqual(credDef.credentialDefinition.value.primary);
    const kcp = parseKeyCorrectnessProof(credDef.keyCorrectnessProof);
    expect(keyCorrectnessProofToJson(kcp)).toEqual(credDef.keyCorrectnessProof);
    expect(holderVerifyKeyCorrectness(pk, kcp)).toBe(true);
  });

  it('makes an offer with a fresh 80-bit nonce and the proof the holder checks', () => {
    const kcp = parseKeyCorrectnessProof(credDef.keyCorrectnessProof);
    const o1 = createCredentialOffer({ schemaId: 'S', credDefId: 'C', keyCorrectnessProof: kcp });
    const o2 = createCredentialOffer({ schemaId: 'S', credDefId: 'C', keyCorrectnessProof: kcp });
    expect(Object.keys(o1)).toEqual(Object.keys(offerVector));
    expect(o1.nonce).toMatch(/^[0-9]+$/);
    expect(BigInt(o1.nonce) < 1n << BigInt(NONCE_BITS)).toBe(true);
    expect(o1.nonce).not.toBe(o2.nonce);
    expect(holderVerifyKeyCorrectness(pk, parseKeyCorrectnessProof(o1.key_correctness_proof))).toBe(true);
  });

  it('issues, for the anoncreds-rs request, a credential of anoncreds-rs shape that the holder verifies', () => {
    const cred = createCredential({ publicKey: pk, privateKey: sk, offer, request, values: rawValues });
    expect(Object.keys(cred).sort()).toEqual(Object.keys(credVector).sort());
    expect(cred.values).toEqual(credVector.values);
    expect(cred.rev_reg_id).toBeNull();
    const sig = Object.fromEntries(Object.entries(cred.signature.p_credential).map(([k, v]) => [k, BigInt(v)])) as {
      m_2: bigint;
      a: bigint;
      e: bigint;
      v: bigint;
    };
    const full = { ...sig, v: sig.v + BigInt(reqVector.credentialRequestMetadata.link_secret_blinding_data.v_prime) };
    const values: Record<string, bigint> = {
      ...Object.fromEntries(Object.entries(cred.values).map(([k, v]) => [k, BigInt(v.encoded)])),
      master_secret: linkSecret,
    };
    expect(holderVerifyPrimarySignature(pk, full, values)).toBe(true);
    const proof = { se: BigInt(cred.signature_correctness_proof.se), c: BigInt(cred.signature_correctness_proof.c) };
    expect(holderVerifySignatureCorrectness(pk, full, proof, BigInt(request.nonce), values)).toBe(true);
    expect(holderVerifyPrimarySignature(pk, full, { ...values, name: values.name! + 1n })).toBe(false);
  });

  it('matches attribute names as anoncreds-rs does (spaces removed, lower case)', () => {
    expect(attrCommonView('First Name')).toBe('firstname');
    const { name, ...rest } = rawValues;
    const cred = createCredential({ publicKey: pk, privateKey: sk, offer, request, values: { ...rest, ' N a M e': name! } });
    expect(Object.keys(cred.values)).toContain(' N a M e');
    expect(() =>
      createCredential({ publicKey: pk, privateKey: sk, offer, request, values: { ...rawValues, NAME: 'x' } }),
    ).toThrow(AnonCredsFormatError);
  });

  it('refuses malformed or mismatched requests before any arithmetic', () => {
    const bad: [unknown, string][] = [
      [null, 'credential request'],
      [{ ...request, cred_def_id: 'other' }, 'another credential definition'],
      [{ ...request, nonce: '12a' }, 'nonce'],
      [{ ...request, nonce: (1n << 80n).toString() }, 'nonce'],
      [{ ...request, entropy: undefined }, 'entropy'],
      [{ ...request, prover_did: 'did:x' }, 'entropy'],
      [{ ...request, blinded_ms: { ...request.blinded_ms, u: '-5' } }, 'blinded_ms.u'],
      [{ ...request, blinded_ms: { ...request.blinded_ms, u: '0' } }, 'out of range'],
      [{ ...request, blinded_ms: { ...request.blinded_ms, u: pk.n.toString() } }, 'out of range'],
      [{ ...request, blinded_ms: { ...request.blinded_ms, u: '1'.repeat(1201) } }, 'blinded_ms.u'],
      [{ ...request, blinded_ms: { ...request.blinded_ms, u: '0123' } }, 'blinded_ms.u'],
      [{ ...request, blinded_ms_correctness_proof: undefined }, 'blinded_ms_correctness_proof'],
    ];
    for (const [req, message] of bad) {
      expect(() => createCredential({ publicKey: pk, privateKey: sk, offer, request: req, values: rawValues })).toThrow(
        AnonCredsFormatError,
      );
      expect(() => createCredential({ publicKey: pk, privateKey: sk, offer, request: req, values: rawValues })).toThrow(
        message,
      );
    }
    expect(() => parseCredentialRequest({ ...request, nonce: 5 })).toThrow(AnonCredsFormatError);
    const withProto = JSON.parse(
      JSON.stringify(request).replace('"master_secret":', '"__proto__":'),
    ) as unknown;
    // zod drops the '__proto__' key: the proof then lacks master_secret and is refused.
    expect(Object.hasOwn(parseCredentialRequest(withProto).blinded_ms_correctness_proof.m_caps, '__proto__')).toBe(false);
    expect(() => createCredential({ publicKey: pk, privateKey: sk, offer, request: withProto, values: rawValues })).toThrow(ClError);
    expect(() =>
      createCredential({ publicKey: pk, privateKey: sk, offer, request, values: JSON.parse('{"__proto__":"1"}') as Record<string, string> }),
    ).toThrow(AnonCredsFormatError);
  });

  it('refuses a request whose proof is bound to another offer, and attribute sets that do not match', () => {
    expect(() =>
      createCredential({ publicKey: pk, privateKey: sk, offer: { ...offer, nonce: '1' }, request, values: rawValues }),
    ).toThrow(ClError);
    const { age: _age, ...missing } = rawValues;
    expect(() => createCredential({ publicKey: pk, privateKey: sk, offer, request, values: missing })).toThrow(ClError);
    expect(() =>
      createCredential({ publicKey: pk, privateKey: sk, offer, request, values: { ...rawValues, extra: '1' } }),
    ).toThrow(ClError);
    expect(() =>
      createCredential({ publicKey: pk, privateKey: sk, offer, request, values: { ...rawValues, master_secret: '1' } }),
    ).toThrow(ClError);
    // A key attribute named like an Object.prototype member must still be provided.
    expect(() =>
      createCredential({ publicKey: { ...pk, r: { ...pk.r, toString: pk.r.age! } }, privateKey: sk, offer, request, values: rawValues }),
    ).toThrow("'toString' value not provided");
  });

  it('refuses malformed keys', () => {
    const primary = credDef.credentialDefinition.value.primary as Record<string, unknown>;
    expect(() => parsePrimaryPublicKey({ ...primary, n: 'abc' })).toThrow(AnonCredsFormatError);
    expect(() => parsePrimaryPublicKey({ ...primary, r: { x: 5 } })).toThrow(AnonCredsFormatError);
    expect(() => parseKeyCorrectnessProof({ c: '1', xz_cap: '1', xr_cap: [['a']] })).toThrow(AnonCredsFormatError);
  });
});
