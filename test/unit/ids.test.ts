import { describe, expect, it } from '@jest/globals';
import { decodeTime, isValid, ulid as packageUlid } from 'ulid';
import { ulid } from '../../lib/ids';

describe('ulid()', () => {
  it('makes valid ULIDs with the given time, as the package does', () => {
    const at = Date.UTC(2026, 10, 26, 12, 0, 0, 123);
    const id = ulid(at);
    expect(isValid(id)).toBe(true);
    expect(decodeTime(id)).toBe(at);
    expect(id.slice(0, 10)).toBe(packageUlid(at).slice(0, 10));
    expect(Math.abs(decodeTime(ulid()) - Date.now())).toBeLessThan(5_000);
  });

  it('draws every random character evenly and never repeats, across many refills of its pool', () => {
    const n = 20_000; // 320,000 random characters: the 4 KiB pool refilled ~78 times
    // A new millisecond each (later than any other id of this file), so that every id draws fresh bits.
    const t0 = Date.now() + 1e9;
    const ids = Array.from({ length: n }, (_, i) => ulid(t0 + i));
    expect(new Set(ids).size).toBe(n);
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id.slice(10)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(32);
    const expected = (n * 16) / 32;
    // Chi-square with 31 degrees of freedom: an even draw passes 90 in all but about 1 run in 10 million;
    // a skewed mapping scores in the thousands.
    const chi2 = [...counts.values()].reduce((s, k) => s + (k - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(90);
  });

  it('keeps the order of creation within one millisecond, and gives a clock that went back its own time', () => {
    const at = Date.now() + 2e9;
    const ids = Array.from({ length: 1000 }, () => ulid(at));
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => decodeTime(id) === at)).toBe(true);
    // The next millisecond draws afresh, where "plus one" would keep the leading random characters.
    const later = ulid(at + 1);
    expect(decodeTime(later)).toBe(at + 1);
    expect(later.slice(10, 20)).not.toBe(ids[999]!.slice(10, 20));
    const earlier = ulid(at - 5);
    expect(decodeTime(earlier)).toBe(at - 5);
    expect(isValid(earlier)).toBe(true);
    // A clock frozen in the past, after later times were seen: its ids keep their order too.
    const past = Date.UTC(2026, 10, 25);
    const frozen = Array.from({ length: 200 }, () => ulid(past));
    expect([...frozen].sort()).toEqual(frozen);
    expect(frozen.every((id) => decodeTime(id) === past)).toBe(true);
  });
});
