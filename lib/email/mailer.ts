import { setTimeout as delay } from 'node:timers/promises';

/** Sends one raw RFC 5322 message (recipients taken from its To header). */
export interface Mailer {
  send(raw: Buffer): Promise<{ messageId: string }>;
}

/** SES said "slow down" (Throttling, TooManyRequests…): retry later. */
export class MailerThrottledError extends Error {
  override readonly name = 'MailerThrottledError';
}

/** SES refused this message for good (MessageRejected, MailFromDomainNotVerified, …): do not retry. */
export class MailerRejectedError extends Error {
  override readonly name = 'MailerRejectedError';
}

export interface BackoffOptions {
  /** Sends in all, the first included (default 4). */
  readonly attempts?: number;
  /** Upper bound of the first wait; it doubles on each retry (default 200 ms). */
  readonly baseMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Sends, retrying only throttling, with exponential backoff and full jitter (each wait uniform in
 * [0, baseMs·2^n)), so that many workers throttled together do not come back together. Any other
 * error, and the last throttling once the attempts are spent, is thrown as is.
 */
export async function sendWithBackoff(mailer: Mailer, raw: Buffer, opts: BackoffOptions = {}): Promise<{ messageId: string }> {
  const attempts = opts.attempts ?? 4;
  const baseMs = opts.baseMs ?? 200;
  const sleep = opts.sleep ?? ((ms: number) => delay(ms).then(() => undefined));
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`attempts must be a positive integer, got ${attempts}`);
  for (let n = 0; ; n++) {
    try {
      return await mailer.send(raw);
    } catch (err) {
      if (!(err instanceof MailerThrottledError) || n + 1 >= attempts) throw err;
      await sleep(Math.random() * baseMs * 2 ** n);
    }
  }
}
