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
    const ids = Array.from({ length: n }, () => ulid(0));
    expect(new Set(ids).size).toBe(n);
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id.slice(10)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(32);
    const expected = (n * 16) / 32;
    // Chi-square with 31 degrees of freedom: 70 is beyond p = 0.0001 for an even draw.
    const chi2 = [...counts.values()].reduce((s, k) => s + (k - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(70);
  });
});
