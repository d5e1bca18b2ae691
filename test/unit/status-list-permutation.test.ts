import { createHash } from 'node:crypto';
import { listPermutation } from '../../lib/status-lists/permutation';

// Fixed keys keep the statistical checks deterministic; their thresholds sit far from what a random permutation gives.
const key = (label: string) => new Uint8Array(createHash('sha256').update(label).digest());

describe('listPermutation', () => {
  it.each([1, 2, 3, 5, 17, 18])('a full pass over 2**%i counters hits every index exactly once (odd widths cycle-walk)', (bits) => {
    const p = listPermutation(key('a'), bits);
    const hits = new Uint8Array(2 ** bits);
    for (let c = 0; c < 2 ** bits; c++) {
      const i = p(c);
      if (!(Number.isInteger(i) && i >= 0 && i < hits.length)) throw new Error(`p(${c}) = ${i} is outside [0, ${hits.length})`);
      hits[i]!++;
    }
    expect(hits.every((n) => n === 1)).toBe(true);
  });

  it('the widest list (2**24): values stay in range and 100,000 counters give 100,000 distinct indexes', () => {
    const p = listPermutation(key('a'), 24);
    const seen = new Set<number>();
    for (let c = 0; c < 100_000; c++) seen.add(p(c * 167));
    expect(seen.size).toBe(100_000);
    expect([...seen].every((i) => i >= 0 && i < 2 ** 24)).toBe(true);
  });

  it('is deterministic for one key; another key, or another width with the same key, gives an unrelated order', () => {
    const counters = Array.from({ length: 1000 }, (_, c) => c);
    const a = counters.map(listPermutation(key('a'), 17));
    expect(counters.map(listPermutation(key('a'), 17))).toEqual(a);
    const b = counters.map(listPermutation(key('b'), 17));
    expect(a.filter((v, c) => v === b[c]).length).toBeLessThan(5);
    const wider = counters.map(listPermutation(key('a'), 18));
    expect(a.filter((v, c) => v === wider[c]).length).toBeLessThan(5);
  });

  it.each([17, 18])('consecutive counters 0..999 (2**%i) are scattered: they span the range, fill every eighth of it, rise about half the time', (bits) => {
    const size = 2 ** bits;
    const p = listPermutation(key('order'), bits);
    const v = Array.from({ length: 1000 }, (_, c) => p(c));
    expect(Math.max(...v) - Math.min(...v)).toBeGreaterThan(0.95 * size);
    const eighths = new Array(8).fill(0);
    for (const i of v) eighths[Math.floor((i / size) * 8)]++;
    // Each eighth expects 125 (standard deviation about 10).
    expect(Math.min(...eighths)).toBeGreaterThan(80);
    const rises = v.slice(1).filter((x, i) => x > v[i]!).length;
    expect(rises).toBeGreaterThan(400);
    expect(rises).toBeLessThan(600);
    // Neighbouring counters do not land near each other.
    const close = v.slice(1).filter((x, i) => Math.abs(x - v[i]!) < size / 1000).length;
    expect(close).toBeLessThan(10);
  });

  it('refuses a width outside [1, 24], a short key, and a counter outside [0, 2**bits)', () => {
    for (const bits of [0, 25, 1.5, Number.NaN]) expect(() => listPermutation(key('a'), bits)).toThrow(RangeError);
    expect(() => listPermutation(new Uint8Array(15), 17)).toThrow(RangeError);
    const p = listPermutation(key('a'), 5);
    for (const c of [-1, 32, 2.5]) expect(() => p(c)).toThrow(RangeError);
  });

  it('does not depend on later changes to the key array the caller passed', () => {
    const k = key('a');
    const p = listPermutation(k, 17);
    const before = [0, 1, 2].map(p);
    k.fill(0);
    expect([0, 1, 2].map(listPermutation(key('a'), 17))).toEqual(before);
    expect([0, 1, 2].map(p)).toEqual(before);
  });
});
