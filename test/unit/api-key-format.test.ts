import { API_KEY_PREFIX, generateApiKey, isLookupCandidate, isWellFormedApiKey, macApiKey, macEquals } from '../../lib/tenancy/api-key-format';

describe('API key format', () => {
  test('keys carry the scanner prefix, 256 random bits and a valid checksum, and are distinct', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const k of keys) {
      expect(k.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(k).toHaveLength(API_KEY_PREFIX.length + 49);
      expect(isWellFormedApiKey(k)).toBe(true);
    }
  });

  test('a key issued earlier stays well-formed: the checksum is pinned (CRC32 of the body, base62, 6 characters)', () => {
    // Issued by this code once and written out here: a change to the format would orphan every key already issued.
    const issued = 'cisk_2P323M2qPSXvWlRQScxbCbws2t338Fy8MnY8CnXZdOy179OUg';
    expect(isWellFormedApiKey(issued)).toBe(true);
    expect(isWellFormedApiKey(`${issued.slice(0, -1)}h`)).toBe(false);
    expect(isWellFormedApiKey(`x${issued}`)).toBe(false);
    expect(isWellFormedApiKey(`${issued}x`)).toBe(false);
    expect(isWellFormedApiKey(issued.replace('cisk_', 'cisx_'))).toBe(false);
    // Bodies whose CRC32 has leading zero hex digits (0x0863f0c4: seven digits, 0x00afe96a: six): the checksum is of all four bytes.
    expect(isWellFormedApiKey('cisk_VS3WRMAfbjLtf91hrN216dIQ5gJQZhwuEhlVycegFKc09We2O')).toBe(true);
    expect(isWellFormedApiKey('cisk_feI1NzJIunStcUOhr9fDzoblrrREyUKVCf2ah4iR1sU00mN6Q')).toBe(true);
  });

  test('any single-character change breaks the checksum', () => {
    const key = generateApiKey();
    for (let i = API_KEY_PREFIX.length; i < key.length; i += 3) {
      const c = key[i] === 'a' ? 'b' : 'a';
      const mutated = key.slice(0, i) + c + key.slice(i + 1);
      expect(isWellFormedApiKey(mutated)).toBe(false);
      expect(isLookupCandidate(mutated)).toBe(false);
    }
  });

  test('lookup candidates: our keys, or operator-chosen values of 32–256 visible characters', () => {
    expect(isLookupCandidate(generateApiKey())).toBe(true);
    expect(isLookupCandidate('short')).toBe(false);
    expect(isLookupCandidate('x'.repeat(32))).toBe(true);
    expect(isLookupCandidate('x'.repeat(257))).toBe(false);
    expect(isLookupCandidate(`${'x'.repeat(31)} `)).toBe(false);
    expect(isLookupCandidate('x'.repeat(31))).toBe(false);
    expect(isLookupCandidate('x'.repeat(256))).toBe(true);
    expect(isLookupCandidate(`!${'~'.repeat(31)}`)).toBe(true);
    // Anchored at both ends: a control or space character anywhere refuses the value.
    expect(isLookupCandidate(` ${'x'.repeat(40)}`)).toBe(false);
    expect(isLookupCandidate(`${'x'.repeat(40)} `)).toBe(false);
    expect(isLookupCandidate(`${'x'.repeat(20)}\u007f${'x'.repeat(20)}`)).toBe(false);
  });

  test('the MAC depends on the secret and compares in constant time', () => {
    const key = generateApiKey();
    const s1 = new Uint8Array(32).fill(1);
    const s2 = new Uint8Array(32).fill(2);
    expect(macApiKey(s1, key)).toBe(macApiKey(s1, key));
    expect(macApiKey(s1, key)).not.toBe(macApiKey(s2, key));
    expect(macEquals(macApiKey(s1, key), macApiKey(s1, key))).toBe(true);
    expect(macEquals(macApiKey(s1, key), macApiKey(s2, key))).toBe(false);
    expect(macEquals('abcd', 'abcdef')).toBe(false);
  });
});
