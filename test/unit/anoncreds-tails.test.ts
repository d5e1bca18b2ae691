import { readFileSync } from 'node:fs';
import { G2, g2FromString, scalarFromString } from '../../lib/anoncreds/bn254';
import { TAIL_BYTES, TailsError, g2ToBytes, generateTailsFile, tailsHash } from '../../lib/anoncreds/tails';
import { g2Coords, g2Generator } from '../helpers/anoncreds-milagro';
import { loadVector } from '../helpers/anoncreds-fixtures';

// anoncreds-rs vectors (test/helpers/anoncreds-vectors/, see SOURCE.md there): the registry (L = 10),
// its private γ, the credential definition's g_dash, and the tails file anoncreds-rs wrote.
const credDef = loadVector<{ credentialDefinition: { value: { revocation: { g_dash: string } } } }>(
  'anoncreds-credential-definition.json',
);
const revReg = loadVector<{
  revocationRegistryDefinition: { value: { maxCredNum: number; tailsHash: string } };
  revocationRegistryDefinitionPrivate: { value: { gamma: string } };
}>('anoncreds-revocation-registry-definition.json');
const tailsFile = readFileSync(new URL('../helpers/anoncreds-vectors/anoncreds-tails-file', import.meta.url));

describe('revocation tails file', () => {
  const gDash = g2FromString(credDef.credentialDefinition.value.revocation.g_dash);
  const gamma = scalarFromString(revReg.revocationRegistryDefinitionPrivate.value.gamma);
  const L = revReg.revocationRegistryDefinition.value.maxCredNum;

  it('reproduces the anoncreds-rs tails file byte for byte, and its hash', () => {
    const file = generateTailsFile(gDash, gamma, L);
    expect(file.length).toBe(2 + (2 * L + 1) * TAIL_BYTES);
    expect(file.equals(tailsFile)).toBe(true);
    expect(tailsHash(file)).toBe(revReg.revocationRegistryDefinition.value.tailsHash);
  });

  it('encodes G2 points as amcl ECP2::tobytes (as milagro-crypto-js writes them)', () => {
    const b: number[] = [];
    g2Generator().toBytes(b);
    expect(g2ToBytes(G2.generator)).toEqual(Buffer.from(b));
    expect(g2Coords(g2Generator())).toEqual({ x: G2.generator.x, y: G2.generator.y });
  });

  it('a different γ or L gives a different file; bad inputs are refused', () => {
    expect(generateTailsFile(gDash, gamma + 1n, L).equals(tailsFile)).toBe(false);
    expect(generateTailsFile(gDash, gamma, 1).length).toBe(2 + 3 * TAIL_BYTES);
    expect(() => generateTailsFile(gDash, gamma, 0)).toThrow(TailsError);
    expect(() => generateTailsFile(gDash, gamma, 1.5)).toThrow(TailsError);
    expect(() => generateTailsFile(gDash, 0n, 1)).toThrow(TailsError);
    expect(() => generateTailsFile(G2.infinity, gamma, 1)).toThrow(TailsError);
    expect(() => g2ToBytes(G2.infinity)).toThrow(TailsError);
  });
});
