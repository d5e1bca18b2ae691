/** Order statistics and the load average the benches report, in one place. */
import { loadavg } from 'node:os';

/** The middle value (the mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError('median of no values');
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile: the smallest value with at least p % of the values at or below it. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) throw new RangeError('percentile of no values');
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** The 1, 5 and 15 minute load averages, for a bench's header: the figures mean little on a busy machine. */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
}
