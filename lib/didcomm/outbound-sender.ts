import { tenantMessageGroup, type Answer, type FairShare, type Refusal } from '../fairness/share';
import { tenantScope } from '../store/keys';
import type { JobQueue } from '../webhooks/records';
import { notYetDue, retryDelaySeconds, sqsDelaySeconds, verdictOf } from '../webhooks/retry-policy';
import type { AgentRuntime, SendResult } from './agent-runtime';
import { outboundOf, type OutboundJob } from './outbound';
import { didcommKeys } from './records';
import type { Item, ItemStore } from '../store/port';

export interface OutboundSenderDeps {
  readonly runtime: AgentRuntime;
  readonly store: ItemStore;
  /** The `didcomm-outbound` queue: retries and deferrals go back on it, delayed. */
  readonly queue: JobQueue;
  /** The webhook retry schedule (WEBHOOK_RETRY_DELAYS_SECONDS): delays before retries 1..n. */
  readonly retryDelaysSeconds: readonly number[];
  /** Per-wallet and per-endpoint caps, slow endpoints throttled (lib/fairness/share.ts). */
  readonly fairness?: FairShare;
  readonly now?: () => Date;
  readonly random?: () => number;
  readonly log?: (message: string, extra: Record<string, unknown>) => void;
  readonly onDeferral?: (refusal: Refusal) => void;
}

/** What one attempt came to. */
export type AttemptResult = 'sent' | 'retry_queued' | 'failed' | 'deferred' | 'skipped' | 'waiting';

/**
 * What an attempt's outcome means, as for webhooks (lib/webhooks/retry-policy.ts): 2xx sent; 5xx,
 * 408, 429, timeouts, connection errors and refused addresses retried while the schedule lasts;
 * other answers (4xx, 3xx: redirects are not followed; 410 too: there is no target to disable here)
 * and a missing key of ours are final.
 */
export function outboundVerdict(result: SendResult, attempt: number, schedule: readonly number[], random: () => number): { readonly kind: 'sent' } | { readonly kind: 'retry'; readonly delaySeconds: number } | { readonly kind: 'failed'; readonly reason: string } {
  if (result.ok) return { kind: 'sent' };
  if (result.outcome === null) return { kind: 'failed', reason: result.detail };
  if (verdictOf(result.outcome) !== 'retry') return { kind: 'failed', reason: `final answer: ${result.detail}` };
  const delay = retryDelaySeconds(schedule, attempt, random);
  return delay === null ? { kind: 'failed', reason: `retries exhausted after ${attempt} attempts: ${result.detail}` } : { kind: 'retry', delaySeconds: delay };
}

/**
 * The outbound worker's engine: one SQS message is one attempt to send one message, in its wallet's
 * session. A failed attempt is retried through a new delayed message (the webhook schedule, so
 * attempts are bounded); the last failure marks our basic message failed. Only faults of our own
 * (the store, the key vault, the queue) throw, so that SQS hands the message over again and, after
 * the queue's receive count, parks it in the DLQ.
 *
 * Delivery is at least once: an attempt redelivered by SQS after its POST may post again. Receivers
 * dedupe by the message's `@id` (we do: `DCSEEN#`); our basic message is marked once.
 */
export class OutboundSender {
  private readonly now: () => Date;
  private readonly random: () => number;
  private readonly log: (message: string, extra: Record<string, unknown>) => void;

  constructor(private readonly deps: OutboundSenderDeps) {
    this.now = deps.now ?? (() => new Date());
    this.random = deps.random ?? Math.random;
    this.log = deps.log ?? (() => undefined);
  }

  private async enqueue(job: OutboundJob): Promise<void> {
    const delaySeconds = sqsDelaySeconds(job.not_before, this.now().getTime());
    await this.deps.queue.send([{ body: JSON.stringify(job), delaySeconds, group: tenantMessageGroup(job.wallet_id) }]);
  }

  /** Runs one attempt; the caller has entered the job's wallet session. */
  async run(job: OutboundJob): Promise<AttemptResult> {
    const now = this.now();
    if (notYetDue(job.not_before, now.getTime())) {
      await this.enqueue(job); // another hop of a delay longer than SQS allows
      return 'waiting';
    }
    const scope = tenantScope(job.wallet_id);
    const fields = { job_id: job.job_id, connection_id: job.connection_id, attempt: job.attempt, ...(job.message_id ? { message_id: job.message_id } : {}) };
    let message: Item | undefined;
    if (job.message_id) {
      // Marked already (a duplicate of a finished job), or deleted: nothing to send.
      const item = (message = await this.deps.store.get(didcommKeys.message(scope, job.message_id), { consistent: true }));
      if (!item || item.state !== 'queued') {
        this.log('outbound message no longer queued; job dropped', { ...fields, state: item?.state ?? 'gone' });
        return 'skipped';
      }
    }
    const send = async (answered: (a: Answer) => void): Promise<SendResult> => {
      const result = await this.deps.runtime.send(scope, outboundOf(job));
      if (result.outcome) answered({ durationMs: result.durationMs, timedOut: result.outcome.kind === 'timeout' });
      return result;
    };
    const ran = this.deps.fairness ? await this.deps.fairness.runTo(scope, job.to.endpoint, send) : { value: await send(() => undefined) };
    if ('refused' in ran) {
      const [deferral] = await this.deps.fairness!.requeue(this.deps.queue, [job], this.random);
      this.log('outbound attempt deferred', { ...fields, refusal: ran.refused, ...deferral });
      this.deps.onDeferral?.(ran.refused);
      return 'deferred';
    }
    const result = ran.value;
    const verdict = outboundVerdict(result, job.attempt, this.deps.retryDelaysSeconds, this.random);
    this.log('outbound attempt', { ...fields, type: String(job.message['@type'] ?? ''), detail: result.detail, verdict: verdict.kind });
    if (verdict.kind === 'retry') {
      // A new attempt starts with no deferrals.
      const next: OutboundJob = { ...job, attempt: job.attempt + 1, not_before: now.getTime() + verdict.delaySeconds * 1000 };
      delete (next as { deferrals?: number }).deferrals;
      await this.enqueue(next);
      return 'retry_queued';
    }
    if (job.message_id) await this.deps.runtime.markMessage(scope, job.message_id, verdict.kind, verdict.kind === 'failed' ? verdict.reason : undefined, message);
    return verdict.kind;
  }
}
