/** What an attempt's outcome means for the delivery. */
export type AttemptOutcome =
  | { readonly kind: 'response'; readonly status: number }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'network'; readonly detail: string }
  | { readonly kind: 'refused_address'; readonly detail: string };

export type Verdict = 'delivered' | 'retry' | 'failed' | 'disable_target';

/**
 * 2xx delivers. 410 Gone disables the target (the receiver says it is gone for good). Other 4xx,
 * and 3xx (redirects are never followed), are final except 408 and 429. 5xx, 408, 429, timeouts,
 * connection errors and refused addresses (a name may resolve elsewhere later) are retried.
 */
export function verdictOf(outcome: AttemptOutcome): Verdict {
  if (outcome.kind !== 'response') return 'retry';
  const s = outcome.status;
  if (s >= 200 && s < 300) return 'delivered';
  if (s === 410) return 'disable_target';
  if (s === 408 || s === 429 || s >= 500) return 'retry';
  return 'failed';
}

/**
 * Delay before retry `n` (1-based): the configured schedule (exponential, about a day in all by
 * default) with +-20 % jitter so that a recovering receiver is not hit by every delivery at once.
 * null when the schedule is exhausted.
 */
export function retryDelaySeconds(schedule: readonly number[], retry: number, random: () => number = Math.random): number | null {
  const base = schedule[retry - 1];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (0.8 + 0.4 * random())));
}

/** SQS delays cap at 15 minutes; longer waits are chained hops. */
export const MAX_SQS_DELAY_SECONDS = 900;

/** The SQS delay that holds a job until `notBefore` (ms), as far as SQS can (15 minutes); 0 without one. */
export function sqsDelaySeconds(notBefore: number | undefined, now: number): number {
  return notBefore ? Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, Math.ceil((notBefore - now) / 1000))) : 0;
}

/** A job that arrived more than a second before `notBefore`: its delay was longer than one SQS hop. */
export function notYetDue(notBefore: number | undefined, now: number): boolean {
  return notBefore !== undefined && notBefore - now > 1000;
}
