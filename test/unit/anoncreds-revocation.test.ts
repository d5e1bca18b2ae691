import { readFileSync } from 'node:fs';
import { modPow, randomBelow } from '../../lib/anoncreds/bignum';
import { G1, G2, R, g1FromString, g2ToString, scalarFromString, scalarToString } from '../../lib/anoncreds/bn254';
import { credentialContext, type PrimaryPrivateKey } from '../../lib/anoncreds/cl';
import { AnonCredsFormatError, createCredential, parsePrimaryPublicKey } from '../../lib/anoncreds/objects';
import { gtToString } from '../../lib/anoncreds/pairing';
import {
  RevocationError,
  accumulatorKey,
  createRevocationRegistryDefinition,
  createRevocationStatusList,
  initialAccumulator,
  newRevocationKeys,
  parseRevocationPrivateKey,
  parseRevocationPublicKey,
  parseRevocationRegistryDefinition,
  parseRevocationRegistryPrivate,
  parseRevocationStatusList,
  revocationKeysMatch,
  revocationPrivateKeyToJson,
  revocationPublicKeyToJson,
  signNonRevocation,
  statusListToJson,
  updateRevocationStatusList,
  type RevocationRandomness,
  type RevocationStatusList,
} from '../../lib/anoncreds/revocation';
import { tailsHash } from '../../lib/anoncreds/tails';
import { holderVerifyPrimarySignature } from '../helpers/anoncreds-cl-holder';
import { loadVector } from '../helpers/anoncreds-fixtures';
import { holderCheckBatch, type HolderRevocationInputs } from '../helpers/anoncreds-revocation-holder';

// anoncreds-rs vectors (test/helpers/anoncreds-vectors/, see SOURCE.md): credential definition with
// its private part (x, sk), registry (L = 10) with γ, tails file, status list, and the legacy
// credential issued at index 9 (its r_credential, rev_reg and witness), with the request it answers.
type Json = Record<string, unknown>;
const credDef = loadVector<{
  credentialDefinition: { value: { revocation: Record<string, string> } };
  credentialDefinitionPrivate: { value: { r_key: { x: string; sk: string } } };
}>('anoncreds-credential-definition.json');
const revRegVector = loadVector<{
  revocationRegistryDefinition: Json & { value: { maxCredNum: number; tailsLocation: string } };
  revocationRegistryDefinitionPrivate: { value: { gamma: string } };
}>('anoncreds-revocation-registry-definition.json');
const statusListText = readFileSync(
  new URL('../helpers/anoncreds-vectors/anoncreds-revocation-status-list.json', import.meta.url),
  'utf8',
).trim();
const statusListVector = JSON.parse(statusListText) as { revRegDefId: string; issuerId: string; timestamp: number };
const tailsFile = readFileSync(new URL('../helpers/anoncreds-vectors/anoncreds-tails-file', import.meta.url));
const legacy = loadVector<{
  signature: { p_credential: { m_2: string }; r_credential: HolderRevocationInputs['rCredential'] };
  rev_reg: { accum: string };
  witness: { omega: string };
}>('anoncreds-legacy-credential.json');
const request = loadVector<{
  credentialRequest: { entropy: string; blinded_ms: { ur: string } };
  credentialRequestMetadata: { link_secret_blinding_data: { vr_prime: string } };
}>('anoncreds-credential-request.json');

const REV_KEY_JSON = credDef.credentialDefinition.value.revocation;
const pub = parseRevocationPublicKey(REV_KEY_JSON);
const priv = parseRevocationPrivateKey(credDef.credentialDefinitionPrivate.value.r_key);
const gamma = parseRevocationRegistryPrivate(revRegVector.revocationRegistryDefinitionPrivate);
const L = revRegVector.revocationRegistryDefinition.value.maxCredNum;
const ENTROPY = request.credentialRequest.entropy;
const UR = g1FromString(request.credentialRequest.blinded_ms.ur);
const VR_PRIME = request.credentialRequestMetadata.link_secret_blinding_data.vr_prime;

/** The holder checks run in a child process (milagro-crypto-js pairings, a few seconds per batch). */
const HOLDER_TIMEOUT_MS = 240_000;

/** Randomness that answers the given scalars in order, then fresh ones. */
function fixed(...values: bigint[]): RevocationRandomness {
  const queue = [...values];
  return { scalar: () => queue.shift() ?? randomBelow(R - 1n) + 1n };
}

const vectorList = (): RevocationStatusList =>
  createRevocationStatusList({
    revRegDefId: statusListVector.revRegDefId,
    issuerId: statusListVector.issuerId,
    gDash: pub.g_dash,
    gamma,
    maxCredNum: L,
    timestamp: statusListVector.timestamp,
  });

/** Σ_{j valid} g'·γ^(L+1−j), from scratch, for comparing with the incremental updates. */
function accumulatorFromScratch(revoked: boolean[]): string {
  let sum = 0n;
  for (let j = 1; j <= revoked.length; j++) if (!revoked[j]) sum += modPow(gamma, BigInt(revoked.length + 1 - j), R);
  return g2ToString(G2.mul(pub.g_dash, sum % R));
}

describe('revocation keys (credential definition value.revocation)', () => {
  it('round-trip the anoncreds-rs key byte for byte; its private part matches it', () => {
    expect(revocationPublicKeyToJson(pub)).toEqual(REV_KEY_JSON);
    expect(JSON.stringify(revocationPublicKeyToJson(pub))).toBe(JSON.stringify(REV_KEY_JSON));
    expect(revocationPrivateKeyToJson(priv)).toEqual(credDef.credentialDefinitionPrivate.value.r_key);
    expect(revocationKeysMatch(pub, priv)).toBe(true);
    expect(revocationKeysMatch(pub, { x: priv.x, sk: priv.sk + 1n })).toBe(false);
    expect(revocationKeysMatch(pub, { x: priv.x + 1n, sk: priv.sk })).toBe(false);
  });

  it('new keys: pk = g·sk, y = ĥ·x, distinct random points, JSON round trip', () => {
    const { publicKey, privateKey } = newRevocationKeys();
    expect(revocationKeysMatch(publicKey, privateKey)).toBe(true);
    const json = revocationPublicKeyToJson(publicKey);
    expect(new Set(Object.values(json)).size).toBe(11);
    expect(revocationPublicKeyToJson(parseRevocationPublicKey(json))).toEqual(json);
    expect(G1.isValid(publicKey.h) && G2.isValid(publicKey.u)).toBe(true);
  });

  it('refuses a missing key, a point off the curve, a bad scalar', () => {
    const { pk: _omit, ...missing } = REV_KEY_JSON;
    expect(() => parseRevocationPublicKey(missing)).toThrow(RevocationError);
    const offCurve = REV_KEY_JSON.h!.split(' ');
    offCurve[1] = `${'0'.repeat(63)}7`;
    expect(() => parseRevocationPublicKey({ ...REV_KEY_JSON, h: offCurve.join(' ') })).toThrow(/invalid revocation key h/);
    // A G2 string where a G1 point belongs.
    expect(() => parseRevocationPublicKey({ ...REV_KEY_JSON, g: REV_KEY_JSON.g_dash })).toThrow(RevocationError);
    expect(() => parseRevocationPrivateKey({ x: 'zz', sk: scalarToString(1n) })).toThrow(RevocationError);
    expect(() => parseRevocationPrivateKey({ x: R.toString(16), sk: scalarToString(1n) })).toThrow(RevocationError);
  });
});

describe('revocation registry definition', () => {
  it('reproduces the anoncreds-rs definition, private part and tails file byte for byte (γ injected)', () => {
    const created = createRevocationRegistryDefinition(
      {
        issuerId: 'did:key:z6MkwXG2WjeQnNxSoynSGYU8V9j3QzP3JSqhdmkHc6SaVWoT',
        credDefId: 'did:key:z6MkwXG2WjeQnNxSoynSGYU8V9j3QzP3JSqhdmkHc6SaVWoT/credential-definition',
        tag: 'default',
        publicKey: pub,
        maxCredNum: L,
        tailsLocation: () => revRegVector.revocationRegistryDefinition.value.tailsLocation,
      },
      fixed(gamma),
    );
    expect(JSON.stringify(created.definition)).toBe(JSON.stringify(revRegVector.revocationRegistryDefinition));
    expect(created.definitionPrivate).toEqual(revRegVector.revocationRegistryDefinitionPrivate);
    expect(created.tailsFile.equals(tailsFile)).toBe(true);
    // z is computed with blinded pairing inputs: the same value whatever the blinding.
    const z = (revRegVector.revocationRegistryDefinition.value as unknown as { publicKeys: { accumKey: { z: string } } })
      .publicKeys.accumKey.z;
    expect(gtToString(accumulatorKey(pub, gamma, L, fixed(5n)))).toBe(z);
    expect(gtToString(accumulatorKey(pub, gamma, L, fixed(R - 2n)))).toBe(z);
  });

  it('the tails location is derived from the tails hash; a fresh γ gives a fresh z and file', () => {
    const created = createRevocationRegistryDefinition({
      issuerId: 'did:web:example.org',
      credDefId: 'did:web:example.org/cd',
      tag: 't',
      publicKey: pub,
      maxCredNum: 3,
      tailsLocation: (hash) => `https://example.org/tails/${hash}`,
    });
    const parsed = parseRevocationRegistryDefinition(created.definition);
    expect(parsed.tailsHash).toBe(tailsHash(created.tailsFile));
    expect(parsed.tailsLocation).toBe(`https://example.org/tails/${parsed.tailsHash}`);
    expect(created.tailsFile.length).toBe(2 + 7 * 128);
    const g = parseRevocationRegistryPrivate(created.definitionPrivate);
    expect(gtToString(parsed.z)).toBe(gtToString(accumulatorKey(pub, g, 3)));
    expect(parsed.z).not.toEqual(parseRevocationRegistryDefinition(revRegVector.revocationRegistryDefinition).z);
  });

  it('parses the vector; refuses a bad type, size, hash or z', () => {
    const def = revRegVector.revocationRegistryDefinition as { value: Json } & Json;
    const parsed = parseRevocationRegistryDefinition(def);
    expect(gtToString(parsed.z)).toBe((def.value.publicKeys as { accumKey: { z: string } }).accumKey.z);
    expect(parsed.maxCredNum).toBe(10);
    expect(() => parseRevocationRegistryDefinition({ ...def, revocDefType: 'CL' })).toThrow(RevocationError);
    expect(() => parseRevocationRegistryDefinition({ ...def, value: { ...def.value, maxCredNum: 1 } })).toThrow(
      RevocationError,
    );
    expect(() => parseRevocationRegistryDefinition({ ...def, value: { ...def.value, maxCredNum: 2 ** 24 + 1 } })).toThrow(
      RevocationError,
    );
    expect(() => parseRevocationRegistryDefinition({ ...def, value: { ...def.value, tailsHash: 'O0Il' } })).toThrow(
      RevocationError,
    );
    const badZ = { accumKey: { z: REV_KEY_JSON.g_dash } };
    expect(() => parseRevocationRegistryDefinition({ ...def, value: { ...def.value, publicKeys: badZ } })).toThrow(
      /accumulator key z/,
    );
    expect(() => parseRevocationRegistryPrivate({ value: { gamma: scalarToString(0n) } })).toThrow(RevocationError);
  });

  it('refuses a registry size outside [2, 2^24]', () => {
    const base = { issuerId: 'i', credDefId: 'c', tag: 't', publicKey: pub, tailsLocation: () => 'x' };
    for (const maxCredNum of [0, 1, 2.5, 2 ** 24 + 1]) {
      expect(() => createRevocationRegistryDefinition({ ...base, maxCredNum })).toThrow(RevocationError);
    }
  });
});

describe('revocation status list and accumulator', () => {
  it('reproduces the anoncreds-rs initial status list byte for byte (issuance by default)', () => {
    const list = vectorList();
    expect(JSON.stringify(statusListToJson(list), null, 2)).toBe(statusListText);
    expect(g2ToString(list.accumulator)).toBe(accumulatorFromScratch(new Array(L).fill(false)));
  });

  it('round-trips the vector status list; refuses bad bits, a bad accumulator, a short list', () => {
    const v = JSON.parse(statusListText) as Json;
    expect(JSON.stringify(statusListToJson(parseRevocationStatusList(v)), null, 2)).toBe(statusListText);
    expect(() => parseRevocationStatusList({ ...v, revocationList: [0, 2, 0] })).toThrow(RevocationError);
    expect(() => parseRevocationStatusList({ ...v, revocationList: [0] })).toThrow(RevocationError);
    expect(() => parseRevocationStatusList({ ...v, currentAccumulator: REV_KEY_JSON.g })).toThrow(/accumulator/);
    expect(() => parseRevocationStatusList({ ...v, timestamp: -1 })).toThrow(RevocationError);
    // The empty accumulator (infinity) is a valid state.
    const inf = { ...v, currentAccumulator: g2ToString(G2.infinity) };
    expect(parseRevocationStatusList(inf).accumulator.inf).toBe(true);
  });

  it('revoking divides out the index tail; revoking twice changes nothing; reinstating restores', () => {
    const list = vectorList();
    const before = JSON.stringify(statusListToJson(list));
    const r1 = updateRevocationStatusList(list, { gDash: pub.g_dash, gamma, revoked: [3, 7], timestamp: 20 });
    expect(r1.revoked).toEqual([3, 7]);
    expect(r1.unchanged).toEqual([]);
    expect(r1.list.revoked.map(Number)).toEqual([0, 0, 0, 1, 0, 0, 0, 1, 0, 0]);
    expect(g2ToString(r1.list.accumulator)).toBe(accumulatorFromScratch(r1.list.revoked));
    expect(r1.list.timestamp).toBe(20);
    // The input is not modified.
    expect(JSON.stringify(statusListToJson(list))).toBe(before);

    const r2 = updateRevocationStatusList(r1.list, { gDash: pub.g_dash, gamma, revoked: [3], timestamp: 21 });
    expect(r2.revoked).toEqual([]);
    expect(r2.unchanged).toEqual([3]);
    expect(g2ToString(r2.list.accumulator)).toBe(g2ToString(r1.list.accumulator));

    const r3 = updateRevocationStatusList(r2.list, { gDash: pub.g_dash, gamma, reinstated: [3, 7], timestamp: 22 });
    expect(r3.reinstated).toEqual([3, 7]);
    expect(g2ToString(r3.list.accumulator)).toBe(g2ToString(list.accumulator));
    expect(updateRevocationStatusList(r3.list, { gDash: pub.g_dash, gamma, reinstated: [5], timestamp: 23 }).unchanged).toEqual([5]);
  });

  it('refuses indices outside 1 … L−1 and contradictory updates', () => {
    const list = vectorList();
    const u = (o: { revoked?: number[]; reinstated?: number[]; timestamp?: number }) =>
      updateRevocationStatusList(list, { gDash: pub.g_dash, gamma, timestamp: 1, ...o });
    for (const i of [0, L, -1, 1.5, L + 1]) expect(() => u({ revoked: [i] })).toThrow(RevocationError);
    expect(() => u({ revoked: [2], reinstated: [2] })).toThrow(/both/);
    expect(() => u({ revoked: [2], timestamp: -5 })).toThrow(RevocationError);
  });

  it('the initial accumulator of a registry holds every index 1 … L', () => {
    expect(g2ToString(initialAccumulator(pub.g_dash, gamma, 4))).toBe(
      g2ToString(G2.mul(pub.g_dash, (gamma + gamma ** 2n + gamma ** 3n + gamma ** 4n) % R)),
    );
    expect(() => initialAccumulator(pub.g_dash, gamma, 1)).toThrow(RevocationError);
  });
});

describe('non-revocation credential signature', () => {
  const rc = legacy.signature.r_credential;

  it('reproduces the anoncreds-rs credential (index 9): r_credential, rev_reg and witness byte for byte', () => {
    const out = signNonRevocation(
      {
        revIdx: 9,
        credentialContext: credentialContext(ENTROPY, 9),
        ur: UR,
        publicKey: pub,
        privateKey: priv,
        gamma,
        statusList: vectorList(),
      },
      fixed(scalarFromString(rc.vr_prime_prime), scalarFromString(rc.c)),
    );
    expect(JSON.stringify(out.r_credential)).toBe(JSON.stringify(rc));
    expect(out.rev_reg).toEqual(legacy.rev_reg);
    expect(out.witness).toEqual(legacy.witness);
  });

  it('refuses a revoked index, an index outside 1 … L−1, a blinded secret at infinity', () => {
    const base = {
      credentialContext: credentialContext(ENTROPY, 2),
      ur: UR,
      publicKey: pub,
      privateKey: priv,
      gamma,
    };
    const revoked = updateRevocationStatusList(vectorList(), { gDash: pub.g_dash, gamma, revoked: [2], timestamp: 1 }).list;
    expect(() => signNonRevocation({ ...base, revIdx: 2, statusList: revoked })).toThrow(/revoked/);
    for (const revIdx of [0, L, 3.5]) {
      expect(() => signNonRevocation({ ...base, revIdx, statusList: vectorList() })).toThrow(RevocationError);
    }
    expect(() => signNonRevocation({ ...base, revIdx: 2, ur: G1.infinity, statusList: vectorList() })).toThrow(
      /blinded/,
    );
  });
});

describe('holder-side check (written from the specification, milagro-crypto-js pairings)', () => {
  const holderInputs = (
    list: RevocationStatusList,
    r: HolderRevocationInputs['rCredential'],
    m2: string,
    extra: Partial<HolderRevocationInputs> = {},
  ): HolderRevocationInputs => ({
    revocationKey: REV_KEY_JSON,
    revRegDef: revRegVector.revocationRegistryDefinition as unknown as HolderRevocationInputs['revRegDef'],
    statusList: statusListToJson(list),
    tailsFile,
    rCredential: r,
    primaryM2: m2,
    vrPrime: VR_PRIME,
    ...extra,
  });

  it('accepts our credential and the anoncreds-rs one; refuses ours once revoked, still accepts the other', () => {
    const list = vectorList();
    const m2 = credentialContext(ENTROPY, 4);
    const ours = signNonRevocation({
      revIdx: 4,
      credentialContext: m2,
      ur: UR,
      publicKey: pub,
      privateKey: priv,
      gamma,
      statusList: list,
    });
    const anoncredsRs = holderInputs(list, legacy.signature.r_credential, legacy.signature.p_credential.m_2, {
      issuedWitness: legacy.witness.omega,
    });
    const revoked = updateRevocationStatusList(list, { gDash: pub.g_dash, gamma, revoked: [4], timestamp: 30 }).list;
    expect(
      holderCheckBatch([
        anoncredsRs,
        holderInputs(list, ours.r_credential, m2.toString(), { issuedWitness: ours.witness.omega }),
        holderInputs(revoked, ours.r_credential, m2.toString()),
        // Another holder's credential stays valid against the new list (its witness recomputed from it).
        { ...anoncredsRs, statusList: statusListToJson(revoked), issuedWitness: undefined },
      ]),
    ).toEqual([null, null, 'accumulator', null]);
  }, HOLDER_TIMEOUT_MS);

  it('refuses a tampered σ, σ_i, u_i, m2 or vr\'', () => {
    const list = vectorList();
    const r = legacy.signature.r_credential;
    const m2 = legacy.signature.p_credential.m_2;
    const other = signNonRevocation({
      revIdx: 5,
      credentialContext: credentialContext(ENTROPY, 5),
      ur: UR,
      publicKey: pub,
      privateKey: priv,
      gamma,
      statusList: list,
    }).r_credential;
    const ws = r.witness_signature;
    expect(
      holderCheckBatch([
        holderInputs(list, { ...r, sigma: other.sigma }, m2),
        holderInputs(list, { ...r, witness_signature: { ...ws, sigma_i: other.witness_signature.sigma_i } }, m2),
        holderInputs(list, { ...r, witness_signature: { ...ws, u_i: other.witness_signature.u_i } }, m2),
        holderInputs(list, r, (BigInt(m2) + 1n).toString()),
        holderInputs(list, r, m2, { vrPrime: scalarToString(1n) }),
      ]),
    ).toEqual(['sigma', 'sigma_i', 'u_i', 'm2', 'sigma']);
  }, HOLDER_TIMEOUT_MS);

  it('a registry made here from fresh keys: accepted, refused after revocation (z from our pairing, checked by milagro)', () => {
    const { publicKey, privateKey } = newRevocationKeys();
    const size = 4;
    const reg = createRevocationRegistryDefinition({
      issuerId: 'did:web:example.org',
      credDefId: 'did:web:example.org/cd',
      tag: 'default',
      publicKey,
      maxCredNum: size,
      tailsLocation: (h) => `https://example.org/tails/${h}`,
    });
    const g = parseRevocationRegistryPrivate(reg.definitionPrivate);
    const list = createRevocationStatusList({
      revRegDefId: 'did:web:example.org/rr',
      issuerId: 'did:web:example.org',
      gDash: publicKey.g_dash,
      gamma: g,
      maxCredNum: size,
      timestamp: 1,
    });
    const vrPrime = randomBelow(R - 1n) + 1n;
    const ur = G1.mul(publicKey.h2, vrPrime);
    const m2 = credentialContext('prover', 1);
    const out = signNonRevocation({ revIdx: 1, credentialContext: m2, ur, publicKey, privateKey, gamma: g, statusList: list });
    const inputs = (l: RevocationStatusList): HolderRevocationInputs => ({
      revocationKey: revocationPublicKeyToJson(publicKey),
      revRegDef: reg.definition,
      statusList: statusListToJson(l),
      tailsFile: reg.tailsFile,
      rCredential: out.r_credential,
      primaryM2: m2.toString(),
      vrPrime: scalarToString(vrPrime),
    });
    const revoked = updateRevocationStatusList(list, { gDash: publicKey.g_dash, gamma: g, revoked: [1], timestamp: 2 });
    expect(
      holderCheckBatch([
        { ...inputs(list), issuedWitness: out.witness.omega },
        inputs(revoked.list),
        // A tails file other than the one hashed in the definition is refused.
        { ...inputs(list), tailsFile },
      ]),
    ).toEqual([null, 'accumulator', 'tails hash']);
  }, HOLDER_TIMEOUT_MS);
});

describe('a revocable credential (objects.createCredential with revocation)', () => {
  const primary = loadVector<{
    credentialDefinition: { value: { primary: unknown } };
    credentialDefinitionPrivate: { value: { p_key: { p: string; q: string } } };
  }>('anoncreds-credential-definition.json');
  const pk = parsePrimaryPublicKey(primary.credentialDefinition.value.primary);
  const sk: PrimaryPrivateKey = {
    p: BigInt(primary.credentialDefinitionPrivate.value.p_key.p),
    q: BigInt(primary.credentialDefinitionPrivate.value.p_key.q),
  };
  const offer = loadVector<Parameters<typeof createCredential>[0]['offer']>('anoncreds-credential-offer.json');
  const req = loadVector<{
    credentialRequest: Record<string, unknown> & { blinded_ms: Record<string, unknown> };
    credentialRequestMetadata: { link_secret_blinding_data: { v_prime: string } };
  }>('anoncreds-credential-request.json');
  const credVector = loadVector<Record<string, unknown> & { values: Record<string, { raw: string; encoded: string }> }>(
    'anoncreds-legacy-credential.json',
  );
  const rawValues = Object.fromEntries(Object.entries(credVector.values).map(([k, v]) => [k, v.raw]));
  const linkSecret = BigInt(loadVector<{ linkSecret: string }>('anoncreds-link-secret.json').linkSecret);
  const revocation = (o: { revIdx?: number; statusList?: RevocationStatusList } = {}) => ({
    revRegId: 'did:key:z6MkwXG2WjeQnNxSoynSGYU8V9j3QzP3JSqhdmkHc6SaVWoT/revocation-registry',
    revIdx: o.revIdx ?? 9,
    publicKey: pub,
    privateKey: priv,
    gamma,
    statusList: o.statusList ?? vectorList(),
  });
  const issue = (request: unknown, o: Parameters<typeof revocation>[0] = {}) =>
    createCredential({ publicKey: pk, privateKey: sk, offer, request, values: rawValues, revocation: revocation(o) });

  it('has the anoncreds-rs shape and values; primary and non-revocation parts verify for the holder', () => {
    const cred = issue(req.credentialRequest);
    expect(Object.keys(cred)).toEqual(Object.keys(credVector));
    expect(cred.rev_reg_id).toBe(credVector.rev_reg_id);
    // m2 binds the prover and the index: the same as anoncreds-rs computed for index 9.
    expect(cred.signature.p_credential.m_2).toBe(legacy.signature.p_credential.m_2);
    expect(cred.signature.r_credential!.m2).toBe(legacy.signature.r_credential.m2);
    // Witness and accumulator depend on the registry only: equal to anoncreds-rs'.
    expect(cred.rev_reg).toEqual(legacy.rev_reg);
    expect(cred.witness).toEqual(legacy.witness);
    const p = cred.signature.p_credential;
    const full = {
      m_2: BigInt(p.m_2),
      a: BigInt(p.a),
      e: BigInt(p.e),
      v: BigInt(p.v) + BigInt(req.credentialRequestMetadata.link_secret_blinding_data.v_prime),
    };
    const values = {
      ...Object.fromEntries(Object.entries(cred.values).map(([k, v]) => [k, BigInt(v.encoded)])),
      master_secret: linkSecret,
    };
    expect(holderVerifyPrimarySignature(pk, full, values)).toBe(true);
    expect(
      holderCheckBatch([
        {
          revocationKey: REV_KEY_JSON,
          revRegDef: revRegVector.revocationRegistryDefinition as unknown as HolderRevocationInputs['revRegDef'],
          statusList: statusListToJson(vectorList()),
          tailsFile,
          rCredential: cred.signature.r_credential!,
          primaryM2: p.m_2,
          vrPrime: VR_PRIME,
          issuedWitness: cred.witness!.omega,
        },
      ]),
    ).toEqual([null]);
  }, HOLDER_TIMEOUT_MS);

  it('refuses, before signing, a request without a valid ur, an index out of range or revoked', () => {
    const { ur: _ur, ...noUr } = req.credentialRequest.blinded_ms;
    const bad: [unknown, Parameters<typeof revocation>[0], RegExp][] = [
      [{ ...req.credentialRequest, blinded_ms: noUr }, {}, /no blinded revocation secret/],
      [{ ...req.credentialRequest, blinded_ms: { ...noUr, ur: 42 } }, {}, /invalid credential request at blinded_ms.ur/],
      [{ ...req.credentialRequest, blinded_ms: { ...noUr, ur: REV_KEY_JSON.g_dash } }, {}, /invalid blinded revocation secret/],
      [req.credentialRequest, { revIdx: L }, /revocation index must be/],
      [req.credentialRequest, { revIdx: 0 }, /revocation index must be/],
      [
        req.credentialRequest,
        { statusList: updateRevocationStatusList(vectorList(), { gDash: pub.g_dash, gamma, revoked: [9], timestamp: 1 }).list },
        /is revoked/,
      ],
    ];
    for (const [request, o, message] of bad) {
      expect(() => issue(request, o)).toThrow(AnonCredsFormatError);
      expect(() => issue(request, o)).toThrow(message);
    }
  });
});
