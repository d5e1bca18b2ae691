import { randomFillSync } from 'node:crypto';
import { monotonicFactory, ulid as ulidWith } from 'ulid';

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

const monotonic = monotonicFactory(poolPrng);
let latest = -Infinity;

/**
 * A ULID from the crypto generator: the time, then 80 random bits. Lists promise "oldest first" by
 * sorting on these ids, so ids made in one process within one millisecond take the previous id's
 * random part plus one (the package's monotonic mode), keeping their order of creation; a fresh
 * millisecond draws fresh bits. A time before the latest one seen (an injected clock) gets a fresh id
 * of its own time, where the package's monotonic mode would stamp it with the later time.
 */
export function ulid(seedTime: number = Date.now()): string {
  if (seedTime < latest) return ulidWith(seedTime, poolPrng);
  latest = seedTime;
  return monotonic(seedTime);
}
