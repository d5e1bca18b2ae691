import { serializeEvent, type EventEnvelope } from '../events/envelope';
import { tenantMessageGroup, type Answer, type FairShare, type Refusal } from '../fairness/share';
import { eventFromItem } from '../events/publisher';
import type { SecretDeriver } from '../secrets/port';
import { keys, tenantScope, type TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore } from '../store/port';
import {
  activeTargets,
  deliveryFromItem,
  deliveryIdFor,
  deliveryItem,
  deliveryTtl,
  signingGenerations,
  type AttemptRecord,
  type DeliveryJob,
  type DeliveryRecord,
  type JobQueue,
  type WebhookSettings,
  WebhookSettingsRepo,
} from './records';
import { notYetDue, retryDelaySeconds, sqsDelaySeconds, verdictOf, type AttemptOutcome, type Verdict } from './retry-policy';
import { signatureHeader, signingKey } from './signing';
import type { WebhookTransport } from './transport';

export interface DispatcherDeps {
  readonly store: ItemStore;
  readonly secrets: SecretDeriver;
  readonly queue: JobQueue;
  /** Only the worker sends requests; the relay fans out and queues. */
  readonly transport?: WebhookTransport;
  /** Delays (s) before retries 1..n. */
  readonly retryDelaysSeconds: readonly number[];
  readonly timeoutMs: number;
  readonly now?: () => Date;
  readonly random?: () => number;
  readonly log?: (message: string, extra: Record<string, unknown>) => void;
  /** Told the outcome of every attempt made (metrics). */
  readonly onAttempt?: (attempt: AttemptReport) => void;
  /**
   * The worker's share rule (lib/fairness/share.ts): an attempt runs only while holding a place under
   * its wallet's and its target's caps; otherwise its job goes back to the queue with a delay.
   */
  readonly fairness?: FairShare;
  /** Told of every job put back over a cap (metrics). */
  readonly onDeferral?: (refusal: Refusal) => void;
}

/** One attempt as the metrics see it: what happened, and what the dispatcher decided from it. */
export interface AttemptReport {
  readonly outcome: AttemptRecord['outcome'];
  readonly verdict: Verdict;
  /** Retries exhausted: a retryable failure that gets no further attempt. */
  readonly exhausted: boolean;
  readonly durationMs: number;
}

/** Keys that sign now: the current generation, and the previous one while its rotation grace lasts. */
export function signingKeys(secrets: SecretDeriver, walletId: string, s: WebhookSettings, now: Date): Promise<Uint8Array[]> {
  return Promise.all(signingGenerations(s, now).map((g) => signingKey(secrets, walletId, g)));
}

function outcomeFields(outcome: AttemptOutcome): Pick<AttemptRecord, 'outcome' | 'status_code' | 'error'> {
  switch (outcome.kind) {
    case 'response':
      return outcome.status >= 200 && outcome.status < 300
        ? { outcome: 'delivered', status_code: outcome.status }
        : { outcome: 'http_error', status_code: outcome.status };
    case 'timeout':
      return { outcome: 'timeout', error: 'no response within the timeout' };
    case 'network':
      return { outcome: 'network_error', error: outcome.detail };
    case 'refused_address':
      return { outcome: 'refused_address', error: outcome.detail };
  }
}

/**
 * Fans events out into per-target deliveries (the relay) and runs delivery attempts (the worker).
 * Both are idempotent, because their inputs arrive at least once: a delivery's first id is derived
 * from its event and URL, and an attempt is recorded only if the delivery's attempt count is still
 * the one the job expects. A duplicate can at worst repeat an HTTP request, which receivers dedupe
 * by `webhook-id` (Standard Webhooks).
 */
export class WebhookDispatcher {
  private readonly settings: WebhookSettingsRepo;
  private readonly now: () => Date;
  private readonly random: () => number;
  private readonly log: (message: string, extra: Record<string, unknown>) => void;

  constructor(private readonly deps: DispatcherDeps) {
    this.now = deps.now ?? (() => new Date());
    this.random = deps.random ?? Math.random;
    this.log = deps.log ?? (() => undefined);
    this.settings = new WebhookSettingsRepo(deps.store, this.now);
  }

  private async enqueue(jobs: readonly DeliveryJob[]): Promise<void> {
    const now = this.now().getTime();
    await this.deps.queue.send(
      jobs.map((job) => ({
        body: JSON.stringify(job),
        delaySeconds: sqsDelaySeconds(job.not_before, now),
        group: tenantMessageGroup(job.wallet_id),
      })),
    );
  }

  /** Relay: one delivery (and its first job) per active target of the event's wallet. */
  async fanOut(event: EventEnvelope): Promise<number> {
    return this.fanOutWith(event, await this.settings.load(tenantScope(event.wallet_id)));
  }

  /**
   * Relay, one stream batch: `fanOut` reading each wallet's settings once for the whole batch, not
   * once per event (a flow writes three events; each read is a request). Read when the wallet's first
   * event of the batch is relayed, which is after every event of the batch was written, so no event is
   * fanned out by settings older than itself. A failed read is not kept: the stream retries the record.
   */
  forBatch(): { fanOut(event: EventEnvelope): Promise<number> } {
    const read = new Map<string, Promise<WebhookSettings>>();
    return {
      fanOut: async (event) => {
        let settings = read.get(event.wallet_id);
        if (!settings) {
          settings = this.settings.load(tenantScope(event.wallet_id));
          read.set(event.wallet_id, settings);
          settings.catch(() => read.delete(event.wallet_id));
        }
        return this.fanOutWith(event, await settings);
      },
    };
  }

  private async fanOutWith(event: EventEnvelope, settings: WebhookSettings): Promise<number> {
    const scope = tenantScope(event.wallet_id);
    const at = this.now();
    // Targets are independent items: recorded in parallel, so a wallet with many targets holds the
    // stream (every wallet's events behind it) for one round trip, not one per target.
    const jobs = await Promise.all(activeTargets(settings, event.created_at).map(async (target): Promise<DeliveryJob | null> => {
      const delivery: DeliveryRecord = {
        delivery_id: deliveryIdFor(event.id, target.url),
        event_id: event.id,
        event_type: event.type,
        url: target.url,
        status: 'pending',
        attempt_count: 0,
        attempts: [],
        created_at: at.toISOString(),
        updated_at: at.toISOString(),
      };
      try {
        await this.deps.store.write([{ type: 'put', item: deliveryItem(scope, delivery, deliveryTtl(at)), condition: 'not_exists' }]);
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
        // Relayed before: only re-send the first job if no attempt ran yet.
        const existing = await this.deps.store.get(keys.webhookDelivery(scope, delivery.delivery_id));
        if (!existing || existing.attempt_count !== 0 || existing.status !== 'pending') return null;
      }
      return { v: 1, wallet_id: scope.walletId, delivery_id: delivery.delivery_id, attempt: 1 };
    }));
    const queued = jobs.filter((j): j is DeliveryJob => j !== null);
    if (queued.length) await this.enqueue(queued);
    return queued.length;
  }

  /** Relay: queues a job a use case staged in its transaction (records.ts `stagedJob`). */
  async enqueueStaged(job: DeliveryJob): Promise<void> {
    await this.enqueue([job]);
  }

  /** Worker: runs one job. Throws only for faults of our own infrastructure (the message is retried). */
  async runJob(job: DeliveryJob): Promise<void> {
    const now = this.now();
    if (notYetDue(job.not_before, now.getTime())) {
      await this.enqueue([job]); // another hop of a delay longer than SQS allows
      return;
    }
    const scope = tenantScope(job.wallet_id);
    const item = await this.deps.store.get(keys.webhookDelivery(scope, job.delivery_id));
    if (!item) return this.log('delivery gone; job dropped', { delivery_id: job.delivery_id });
    const delivery = deliveryFromItem(item);
    if (delivery.attempt_count >= job.attempt) {
      // Recorded already: a duplicate, or our earlier run stopped part-way. Finish only what that run
      // left undone, so duplicates never multiply: queue the retry unless it is marked queued, and
      // disable a target that answered 410 (idempotent).
      if (delivery.attempt_count !== job.attempt) return;
      if (delivery.status === 'retrying' && item.next_enqueued === false && delivery.next_attempt_at) {
        await this.queueNext(scope, job, Date.parse(delivery.next_attempt_at));
      } else if (delivery.status === 'failed' && delivery.attempts.at(-1)?.status_code === 410) {
        // Only if the settings did not change since the 410: a tenant who listed the URL again meant it.
        await this.disableTarget(scope, delivery.url, `410 Gone on delivery ${delivery.delivery_id}`, delivery.attempts.at(-1)!.at);
      }
      return;
    }
    if (delivery.attempt_count !== job.attempt - 1 || (delivery.status !== 'pending' && delivery.status !== 'retrying')) return;
    if (!this.deps.transport) throw new Error('this dispatcher has no transport: only the delivery worker runs jobs');

    // A place under the wallet's and the target's caps first (a refused job costs nothing more), or the
    // job goes back to the queue: a deferral, not an attempt.
    const transport = this.deps.transport;
    const attempt = (answered: (a: Answer) => void) => this.attempt(scope, job, delivery, now, transport, answered);
    const ran = this.deps.fairness ? await this.deps.fairness.runTo(scope, delivery.url, attempt) : await attempt(() => undefined);
    if (ran && 'refused' in ran) await this.defer(job, ran.refused);
  }

  /** The attempt itself, once the job holds its places: checks, the request, and its record. */
  private async attempt(scope: TenantScope, job: DeliveryJob, delivery: DeliveryRecord, now: Date, transport: WebhookTransport, onAnswer: (a: Answer) => void): Promise<void> {
    const [settings, eventItem] = await Promise.all([this.settings.load(scope), this.deps.store.get(keys.event(scope, delivery.event_id))]);
    const target = settings.targets.find((t) => t.url === delivery.url);
    if (!target || target.state !== 'active') {
      await this.finish(scope, delivery, job, { status: 'cancelled', final_reason: target ? 'target disabled' : 'target removed from settings' });
      return;
    }
    if (!eventItem) {
      await this.finish(scope, delivery, job, { status: 'failed', final_reason: 'event expired' });
      return;
    }
    const event = eventFromItem(eventItem);
    const body = serializeEvent(event);
    const timestamp = Math.floor(now.getTime() / 1000);
    const signature = signatureHeader(await signingKeys(this.deps.secrets, scope.walletId, settings, now), event.id, timestamp, body);
    const result = await transport.post({
      url: delivery.url,
      body,
      timeoutMs: this.deps.timeoutMs,
      headers: { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature },
    });
    onAnswer({ durationMs: result.durationMs, timedOut: result.outcome.kind === 'timeout' });

    const attempt: AttemptRecord = {
      attempt: job.attempt,
      at: now.toISOString(),
      duration_ms: result.durationMs,
      ...outcomeFields(result.outcome),
      ...(result.responseSnippet ? { response_snippet: result.responseSnippet } : {}),
    };
    const verdict = verdictOf(result.outcome);
    const delay = verdict === 'retry' ? retryDelaySeconds(this.deps.retryDelaysSeconds, job.attempt, this.random) : null;
    this.log('webhook attempt', { delivery_id: delivery.delivery_id, attempt: job.attempt, outcome: attempt.outcome, status_code: attempt.status_code, verdict });
    this.deps.onAttempt?.({ outcome: attempt.outcome, verdict, exhausted: verdict === 'retry' && delay === null, durationMs: result.durationMs });

    if (verdict === 'delivered') {
      await this.finish(scope, delivery, job, { status: 'delivered' }, attempt);
    } else if (verdict === 'retry' && delay !== null) {
      const nextAt = now.getTime() + delay * 1000;
      const recorded = await this.finish(scope, delivery, job, { status: 'retrying', next_attempt_at: new Date(nextAt).toISOString() }, attempt);
      if (recorded) await this.queueNext(scope, job, nextAt);
    } else if (verdict === 'disable_target') {
      const recorded = await this.finish(scope, delivery, job, { status: 'failed', final_reason: 'receiver answered 410 Gone: target disabled' }, attempt);
      if (recorded) await this.disableTarget(scope, delivery.url, `410 Gone on delivery ${delivery.delivery_id}`);
    } else {
      const reason = verdict === 'retry' ? 'retries exhausted' : `final response ${attempt.status_code}`;
      await this.finish(scope, delivery, job, { status: 'failed', final_reason: reason }, attempt);
    }
  }

  /** Puts a job over its cap back on the queue, delayed; the delivery record is untouched (no attempt ran). */
  private async defer(job: DeliveryJob, refusal: Refusal): Promise<void> {
    const [deferral] = await this.deps.fairness!.requeue(this.deps.queue, [job], this.random);
    this.log('webhook attempt deferred', { delivery_id: job.delivery_id, attempt: job.attempt, refusal, ...deferral });
    this.deps.onDeferral?.(refusal);
  }

  /** Queues the next attempt, then marks it queued (a copy of this job arriving later then does nothing). */
  private async queueNext(scope: TenantScope, job: DeliveryJob, notBefore: number): Promise<void> {
    await this.enqueue([{ v: 1, wallet_id: job.wallet_id, delivery_id: job.delivery_id, attempt: job.attempt + 1, not_before: notBefore }]);
    try {
      await this.deps.store.write([
        { type: 'update', key: keys.webhookDelivery(scope, job.delivery_id), set: { next_enqueued: true }, condition: { equals: { attempt_count: job.attempt } } },
      ]);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err; // the next attempt already ran
    }
  }

  /** Records the attempt's result unless another run recorded this attempt first (returns false then). */
  private async finish(
    scope: TenantScope,
    delivery: DeliveryRecord,
    job: DeliveryJob,
    change: { status: DeliveryRecord['status']; next_attempt_at?: string; final_reason?: string },
    attempt?: AttemptRecord,
  ): Promise<boolean> {
    const set: Record<string, unknown> = {
      status: change.status,
      updated_at: this.now().toISOString(),
      ...(change.final_reason ? { final_reason: change.final_reason } : {}),
      ...(change.next_attempt_at ? { next_attempt_at: change.next_attempt_at } : {}),
    };
    if (attempt) {
      set.attempt_count = job.attempt;
      set.attempts = [...delivery.attempts, attempt];
    }
    if (change.status === 'retrying') set.next_enqueued = false;
    try {
      await this.deps.store.write([
        {
          type: 'update',
          key: keys.webhookDelivery(scope, delivery.delivery_id),
          set,
          ...(change.next_attempt_at ? {} : { remove: ['next_attempt_at', 'next_enqueued'] }),
          condition: { equals: { attempt_count: job.attempt - 1 } },
        },
      ]);
      return true;
    } catch (err) {
      if (err instanceof ConditionFailedError) return false;
      throw err;
    }
  }

  private async disableTarget(scope: TenantScope, url: string, reason: string, unlessChangedAfter?: string): Promise<void> {
    const at = this.now().toISOString();
    const current = await this.settings.load(scope);
    if (!current.targets.some((t) => t.url === url && t.state === 'active')) return;
    if (unlessChangedAfter && current.updated_at && current.updated_at > unlessChangedAfter) return;
    await this.settings.mutate(scope, (s) => ({
      ...s,
      targets: s.targets.map((t) => (t.url === url && t.state === 'active' ? { ...t, state: 'disabled', disabled_at: at, disabled_reason: reason } : t)),
    }));
  }
}
