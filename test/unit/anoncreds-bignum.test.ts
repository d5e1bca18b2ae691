import { createHash } from 'node:crypto';
import {
  BignumError,
  encodeAttribute,
  fromBytes,
  gcd,
  generatePrimeInRange,
  genX,
  hashListToBignum,
  hashToBignum,
  isProbablePrime,
  modInverse,
  modPow,
  randomBelow,
  randomBits,
  randomQuadraticResidue,
  toBytes,
} from '../../lib/anoncreds/bignum';
import { CLS } from '../helpers/anoncreds-clsignatures-vectors';
import { loadVector } from '../helpers/anoncreds-fixtures';

const legacyCredential = loadVector<{ values: Record<string, { raw: string; encoded: string }> }>(
  'anoncreds-legacy-credential.json',
);

describe('bignum helpers', () => {
  it('toBytes is OpenSSL BN_bn2bin (minimal big-endian, zero is empty)', () => {
    expect(toBytes(0n).length).toBe(0);
    expect(toBytes(1n)).toEqual(Buffer.from([1]));
    expect(toBytes(0x1234n)).toEqual(Buffer.from([0x12, 0x34]));
    expect(toBytes(0x123n)).toEqual(Buffer.from([0x01, 0x23]));
    expect(fromBytes(toBytes(2n ** 2048n - 1n))).toBe(2n ** 2048n - 1n);
  });

  it('modPow matches a plain square-and-multiply, and negative exponents use the inverse', () => {
    const m = BigInt(CLS.primaryPublicKey.n);
    const b = BigInt(CLS.primaryPublicKey.s);
    const e = BigInt(CLS.mockedRandomness.v_prime_prime);
    let ref = 1n;
    let base = b % m;
    for (let x = e; x > 0n; x >>= 1n) {
      if (x & 1n) ref = (ref * base) % m;
      base = (base * base) % m;
    }
    expect(modPow(b, e, m)).toBe(ref);
    expect(modPow(b, 0n, m)).toBe(1n);
    expect((modPow(b, -5n, m) * modPow(b, 5n, m)) % m).toBe(1n);
    expect(() => modPow(2n, 3n, 0n)).toThrow(BignumError);
  });

  it('modInverse inverts and refuses non-units', () => {
    const m = BigInt(CLS.primaryPublicKey.n);
    const a = BigInt(CLS.primaryPublicKey.z);
    expect((modInverse(a, m) * a) % m).toBe(1n);
    expect(() => modInverse(6n, 9n)).toThrow(BignumError);
    expect(gcd(12n, 18n)).toBe(6n);
  });

  it('random values stay in their ranges', () => {
    for (let i = 0; i < 50; i++) {
      expect(randomBits(13)).toBeLessThan(2n ** 13n);
      const r = randomBelow(1000n);
      expect(r >= 0n && r < 1000n).toBe(true);
      const x = genX(5n, 7n);
      expect(x >= 2n && x < 34n).toBe(true);
    }
    expect(() => randomBelow(0n)).toThrow(BignumError);
  });

  it('random quadratic residues are squares of units', () => {
    const p = 1019n;
    const q = 1031n;
    const qr = randomQuadraticResidue(p * q);
    // Euler's criterion modulo each prime factor
    expect(modPow(qr, (p - 1n) / 2n, p)).toBe(1n);
    expect(modPow(qr, (q - 1n) / 2n, q)).toBe(1n);
  });

  it('generatePrimeInRange gives e in [2^596, 2^596 + 2^119) and prime', () => {
    const e = generatePrimeInRange(596, 119);
    expect(e > 2n ** 596n && e < 2n ** 596n + 2n ** 119n).toBe(true);
    expect(isProbablePrime(e)).toBe(true);
    expect(isProbablePrime(BigInt(CLS.mockedRandomness.prime_in_range_e))).toBe(true);
    expect(isProbablePrime(BigInt(CLS.mockedRandomness.prime_in_range_e) + 2n)).toBe(false);
  });

  it('hash_list_to_bignum reproduces the clsignatures vector (hash.rs get_hash_as_int_works)', () => {
    const parts = CLS.hashListToBignum.inputs_hex.map((h) => Buffer.from(h, 'hex'));
    expect(hashListToBignum(parts).toString(16).toUpperCase()).toBe(CLS.hashListToBignum.expected_hex);
    expect(hashToBignum('abc', 'little')).toBe(
      fromBytes(createHash('sha256').update('abc').digest().reverse()),
    );
  });

  it('encodes attributes as anoncreds-rs does (its test_encode_attribute vectors)', () => {
    // hyperledger/anoncreds-rs src/services/issuer.rs, test `test_encode_attribute`.
    const vectors: [string, string][] = [
      ['101 Wilson Lane', '68086943237164982734333428280784300550565381723532936263016368251445461241953'],
      ['87121', '87121'],
      ['SLC', '101327353979588246869873249766058188995681113722618593621043638294296500696424'],
      ['101 Tela Lane', '63690509275174663089934667471948380740244018358024875547775652380902762701972'],
      ['UT', '93856629670657830351991220989031130499313559332549427637940645777813964461231'],
      ['', '102987336249554097029535212322581322789799900648198034993379397001115665086549'],
      ['None', '99769404535520360775991420569103450442789945655240760487761322098828903685777'],
      ['0', '0'],
      ['1', '1'],
      ['2147483647', '2147483647'],
      ['2147483648', '26221484005389514539852548961319751347124425277437769688639924217837557266135'],
      ['-2147483648', '-2147483648'],
      ['-2147483649', '68956915425095939579909400566452872085353864667122112803508671228696852865689'],
      ['0.0', '62838607218564353630028473473939957328943626306458686867332534889076311281879'],
      ['\x00', '49846369543417741186729467304575255505141344055555831574636310663216789168157'],
      ['\x01', '34356466678672179216206944866734405838331831190171667647615530531663699592602'],
      ['\x02', '99398763056634537812744552006896172984671876672520535998211840060697129507206'],
    ];
    for (const [raw, encoded] of vectors) expect(encodeAttribute(raw)).toBe(encoded);
  });

  it('encodes attributes as anoncreds-rs does (the anoncreds-rs credential vector)', () => {
    for (const { raw, encoded } of Object.values(legacyCredential.values)) expect(encodeAttribute(raw)).toBe(encoded);
    expect(encodeAttribute('2147483647')).toBe('2147483647');
    expect(encodeAttribute('-2147483648')).toBe('-2147483648');
    expect(encodeAttribute('+7')).toBe('7');
    expect(encodeAttribute('007')).toBe('7');
    expect(encodeAttribute('2147483648')).toBe(hashToBignum('2147483648').toString());
    expect(encodeAttribute(' 7')).toBe(hashToBignum(' 7').toString());
    expect(encodeAttribute('1.5')).toBe(hashToBignum('1.5').toString());
    expect(encodeAttribute('')).toBe(hashToBignum('').toString());
  });
});
