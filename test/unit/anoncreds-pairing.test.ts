import { randomBytes } from 'node:crypto';
import { modPow } from '../../lib/anoncreds/bignum';
import { BN_X, CurveError, G1, G2, P, R, g1FromString, g2FromString, scalarFromString } from '../../lib/anoncreds/bn254';
import {
  FP12_ONE,
  HARD_PART,
  finalExponentiation,
  fp12Conj,
  fp12Eq,
  fp12Frob,
  fp12Inv,
  fp12Mul,
  gtFromString,
  gtPow,
  gtToString,
  isValidGt,
  millerLoop,
  pairing,
  type Fp12,
} from '../../lib/anoncreds/pairing';
import { loadVector } from '../helpers/anoncreds-fixtures';
import { g1ToMilagro, g2ToMilagro, milagroPairing } from '../helpers/anoncreds-milagro';

const randomScalar = () => (BigInt(`0x${randomBytes(32).toString('hex')}`) % (R - 1n)) + 1n;
/** Our coefficients in AMCL's FP12 order (a.a, a.b, b.a, b.b, c.a, c.b; each FP2 a, b). */
const amclOrder = (f: Fp12) => [0, 3, 1, 4, 2, 5].flatMap((k) => [f[k]!.a, f[k]!.b]);

// anoncreds-rs registry (test/helpers/anoncreds-vectors/, see SOURCE.md): z = e(g·γ^(L+1), g'),
// computed by clsignatures with Rust amcl; γ is in the private part, g and g' in the credential definition.
const credDef = loadVector<{ credentialDefinition: { value: { revocation: { g: string; g_dash: string } } } }>(
  'anoncreds-credential-definition.json',
);
const revReg = loadVector<{
  revocationRegistryDefinition: { value: { maxCredNum: number; publicKeys: { accumKey: { z: string } } } };
  revocationRegistryDefinitionPrivate: { value: { gamma: string } };
}>('anoncreds-revocation-registry-definition.json');
const VECTOR_Z = revReg.revocationRegistryDefinition.value.publicKeys.accumKey.z;

describe('BN254 optimal ate pairing', () => {
  it('the hard-part decomposition is (p⁴ − p² + 1)/r', () => {
    const [l0, l1, l2, l3] = HARD_PART;
    expect((P ** 4n - P ** 2n + 1n) % R).toBe(0n);
    expect(l0 + l1 * P + l2 * P ** 2n + l3 * P ** 3n).toBe((P ** 4n - P ** 2n + 1n) / R);
    expect(BN_X).toBeLessThan(0n);
  });

  it('reproduces the anoncreds-rs accumulator key z byte for byte', () => {
    const rev = credDef.credentialDefinition.value.revocation;
    const gamma = scalarFromString(revReg.revocationRegistryDefinitionPrivate.value.gamma);
    const L = BigInt(revReg.revocationRegistryDefinition.value.maxCredNum);
    const z = pairing(G1.mul(g1FromString(rev.g), modPow(gamma, L + 1n, R)), g2FromString(rev.g_dash));
    expect(gtToString(z)).toBe(VECTOR_Z);
    // A different γ gives a different z.
    const z2 = pairing(G1.mul(g1FromString(rev.g), modPow(gamma + 1n, L + 1n, R)), g2FromString(rev.g_dash));
    expect(gtToString(z2)).not.toBe(VECTOR_Z);
  });

  it('agrees with milagro-crypto-js on the generators and on random points', () => {
    const cases: [bigint, bigint][] = [
      [1n, 1n],
      [randomScalar(), randomScalar()],
    ];
    for (const [a, b] of cases) {
      const p = G1.mul(G1.generator, a);
      const q = G2.mul(G2.generator, b);
      expect(amclOrder(pairing(p, q))).toEqual(milagroPairing(g1ToMilagro(p), g2ToMilagro(q)));
    }
  });

  it('is bilinear, non-degenerate and of order r', () => {
    const e = pairing(G1.generator, G2.generator);
    expect(fp12Eq(e, FP12_ONE)).toBe(false);
    expect(fp12Eq(gtPow(e, R), FP12_ONE)).toBe(true);
    const a = randomScalar();
    const b = randomScalar();
    const eab = pairing(G1.mul(G1.generator, a), G2.mul(G2.generator, b));
    expect(fp12Eq(eab, gtPow(e, (a * b) % R))).toBe(true);
    // e(P1 + P2, Q) = e(P1, Q)·e(P2, Q)
    const p1 = G1.mul(G1.generator, a);
    const p2 = G1.mul(G1.generator, b);
    expect(fp12Eq(pairing(G1.add(p1, p2), G2.generator), fp12Mul(pairing(p1, G2.generator), pairing(p2, G2.generator)))).toBe(true);
    // e(−P, Q) = e(P, Q)⁻¹ = conj(e(P, Q))
    expect(fp12Eq(pairing(G1.neg(p1), G2.generator), fp12Conj(pairing(p1, G2.generator)))).toBe(true);
    // Infinity pairs to one.
    expect(fp12Eq(pairing(G1.infinity, G2.generator), FP12_ONE)).toBe(true);
    expect(fp12Eq(pairing(G1.generator, G2.infinity), FP12_ONE)).toBe(true);
  });

  it('field helpers: inverse, Frobenius of order 12, final exponentiation of one', () => {
    const f = millerLoop(G1.generator, G2.generator);
    expect(fp12Eq(fp12Mul(f, fp12Inv(f)), FP12_ONE)).toBe(true);
    expect(fp12Eq(fp12Frob(f, 12), f)).toBe(true);
    expect(fp12Eq(fp12Frob(f, 6), fp12Conj(f))).toBe(true);
    expect(fp12Eq(finalExponentiation(FP12_ONE), FP12_ONE)).toBe(true);
    expect(() => fp12Inv([...FP12_ONE].map(() => ({ a: 0n, b: 0n })) as unknown as Fp12)).toThrow(CurveError);
  });

  it('refuses points that are not in the groups', () => {
    expect(() => pairing({ x: 1n, y: 1n, inf: false }, G2.generator)).toThrow(CurveError);
    expect(() => pairing(G1.generator, { ...G2.generator, y: G2.generator.x })).toThrow(CurveError);
  });
});

describe('pairing values in AMCL hex', () => {
  it('round-trips the vector z byte for byte', () => {
    expect(gtToString(gtFromString(VECTOR_Z))).toBe(VECTOR_Z);
  });

  it('prints every coordinate with excess 1, in Montgomery form', () => {
    const s = gtToString(FP12_ONE).split(' ');
    expect(s).toHaveLength(24);
    expect(s.filter((_, i) => i % 2 === 0)).toEqual(Array(12).fill('1'));
    expect(BigInt(`0x${s[1]}`)).toBe((1n << 280n) % P);
    expect(s.slice(3).filter((_, i) => i % 2 === 0)).toEqual(Array(11).fill('0'.repeat(64)));
  });

  it('refuses malformed values and values outside the cyclotomic subgroup', () => {
    const parts = VECTOR_Z.split(' ');
    expect(() => gtFromString(42)).toThrow(CurveError);
    expect(() => gtFromString(parts.slice(2).join(' '))).toThrow(/12 coordinates/);
    expect(() => gtFromString(['0', ...parts.slice(1)].join(' '))).toThrow(/excess/);
    expect(() => gtFromString([parts[0], 'XYZ', ...parts.slice(2)].join(' '))).toThrow(/hex/);
    // Changing one coordinate leaves the subgroup.
    const tampered = [...parts];
    tampered[1] = '0'.repeat(63) + '5';
    expect(() => gtFromString(tampered.join(' '))).toThrow(/invalid pairing value/);
    expect(() => gtFromString(Array(12).fill(`1 ${'0'.repeat(64)}`).join(' '))).toThrow(/invalid pairing value/);
    // A Miller-loop output (before the final exponentiation) is not a pairing value.
    expect(isValidGt(millerLoop(G1.generator, G2.generator))).toBe(false);
    expect(isValidGt(pairing(G1.generator, G2.generator))).toBe(true);
  });
});
