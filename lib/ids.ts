import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

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

let current: { readonly time: number; readonly next: (time: number) => string } | null = null;

/**
 * A ULID from the crypto generator: the time, then 80 random bits. Lists promise "oldest first" by
 * sorting on these ids, so ids made one after another in one process for the same millisecond take
 * the previous id's random part plus one (the package's monotonic mode), keeping their order of
 * creation; any other time draws fresh bits and is stamped with its own time, earlier or later (an
 * injected clock may go back, where the package's one monotonic factory would stamp the later time).
 */
export function ulid(seedTime?: number): string {
  // As the package: no time (or 0, or NaN) is now.
  const time = !seedTime || Number.isNaN(seedTime) ? Date.now() : seedTime;
  if (current?.time !== time) current = { time, next: monotonicFactory(poolPrng) };
  return current.next(time);
}
