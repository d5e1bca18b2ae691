import { randomFillSync } from 'node:crypto';
import { ulid as ulidWith } from 'ulid';

/**
 * Random bytes drawn 4 KiB at a time. The `ulid` package asks `crypto.getRandomValues` for one byte
 * per character (16 calls per id) and detects its generator again on every call: 1.6 % of the local
 * runtime's CPU per issued credential in a profile (docs/benchmarks.md, issue 25). Same source, same
 * distribution (a byte / 256, which maps evenly onto the 32 characters), fewer calls.
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

function poolPrng(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 256;
}

/** A ULID (time-ordered, 80 random bits) from the crypto generator. */
export function ulid(seedTime?: number): string {
  return ulidWith(seedTime, poolPrng);
}
