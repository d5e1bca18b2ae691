import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from '../http/errors';
import type { EventEnvelope } from '../events/envelope';
import type { EventPublisher } from '../events/publisher';
import type { SecretDeriver } from '../secrets/port';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore, type WriteOp } from '../store/port';
import {
  activeTargets,
  deliveryFromItem,
  deliveryItem,
  deliveryTtl,
  DELIVERY_RETENTION_DAYS,
  freshDeliveryId,
  signingGenerations,
  stagedJob,
  type DeliveryRecord,
  type DeliveryStatus,
  type WebhookSettings,
  type WebhookTarget,
  WebhookSettingsRepo,
} from './records';
import { formatSecret, signingKey } from './signing';
import { normaliseTargetUrl, targetUrlProblem } from './target-url';

export const DEFAULT_ROTATION_GRACE_SECONDS = 86400;

/** How long past its due time a pending or retrying delivery counts as stalled (its job was dead-lettered). */
export const STALLED_AFTER_MS = 3600_000;

/** Pending/retrying and not stalled: a delivery whose job is still on the queue. */
function inProgress(d: DeliveryRecord, now: Date): boolean {
  if (d.status === 'pending') return now.getTime() - Date.parse(d.updated_at) < STALLED_AFTER_MS;
  if (d.status === 'retrying') return now.getTime() - Date.parse(d.next_attempt_at ?? d.updated_at) < STALLED_AFTER_MS;
  return false;
}

export interface WebhookServiceDeps {
  readonly store: ItemStore;
  readonly secrets: SecretDeriver;
  readonly events: EventPublisher;
  readonly allowLoopback: boolean;
  readonly now?: () => Date;
}

/** Use cases behind the webhook settings and delivery routes; every one acts in the caller's wallet. */
export class WebhookService {
  private readonly settings: WebhookSettingsRepo;
  private readonly now: () => Date;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.settings = new WebhookSettingsRepo(deps.store, this.now);
  }

  async getTargetUrls(scope: TenantScope): Promise<string[]> {
    return (await this.settings.load(scope)).targets.map((t) => t.url);
  }

  /**
   * Replaces the list. URLs are stored in their normalised form (`new URL(u).href`: lower-case host,
   * default port dropped, no trailing dot on the host), so one receiver cannot be listed twice. Listing a disabled URL again
   * re-enables it: PUT says "deliver here".
   */
  async putTargetUrls(scope: TenantScope, urls: readonly string[]): Promise<string[]> {
    const details: ErrorDetail[] = [];
    const normalised: string[] = [];
    urls.forEach((url, i) => {
      const problem = targetUrlProblem(url, { allowLoopback: this.deps.allowLoopback });
      if (problem) return details.push({ path: `urls.${i}`, message: problem });
      const href = normaliseTargetUrl(url);
      if (normalised.includes(href)) return details.push({ path: `urls.${i}`, message: 'duplicate URL' });
      normalised.push(href);
    });
    if (details.length) throw new ValidationError(details, 'Invalid webhook target URL(s)');
    const now = this.now().toISOString();
    const next = await this.settings.mutate(scope, (s) => ({
      ...s,
      targets: normalised.map((url): WebhookTarget => ({ url, state: 'active', added_at: s.targets.find((t) => t.url === url)?.added_at ?? now })),
    }));
    return next.targets.map((t) => t.url);
  }

  async listTargets(scope: TenantScope): Promise<WebhookTarget[]> {
    return [...(await this.settings.load(scope)).targets];
  }

  async ping(scope: TenantScope): Promise<{ event: EventEnvelope }> {
    const settings = await this.settings.load(scope);
    if (activeTargets(settings).length === 0) {
      throw new ConflictError('This wallet has no active webhook target URL to ping', 'no_webhook_targets');
    }
    const event = await this.deps.events.publish(scope, 'ping', { message: 'Test delivery requested through the API' });
    return { event };
  }

  private async secretView(scope: TenantScope, s: WebhookSettings) {
    const [current, previous] = signingGenerations(s, this.now());
    const view: { secret: string; previous_secret?: string; previous_secret_expires_at?: string } = {
      secret: formatSecret(await signingKey(this.deps.secrets, scope.walletId, current!)),
    };
    if (previous !== undefined) {
      view.previous_secret = formatSecret(await signingKey(this.deps.secrets, scope.walletId, previous));
      view.previous_secret_expires_at = s.previous_expires_at!;
    }
    return view;
  }

  async getSecret(scope: TenantScope) {
    return this.secretView(scope, await this.settings.load(scope));
  }

  /** A new secret signs from now on; the old one signs too until the grace period ends. */
  async rotateSecret(scope: TenantScope, graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS) {
    const expires = new Date(this.now().getTime() + graceSeconds * 1000).toISOString();
    const next = await this.settings.mutate(scope, (s) => {
      const { previous_generation: _g, previous_expires_at: _e, ...rest } = s;
      return {
        ...rest,
        secret_generation: s.secret_generation + 1,
        ...(graceSeconds > 0 ? { previous_generation: s.secret_generation, previous_expires_at: expires } : {}),
      };
    });
    return this.secretView(scope, next);
  }

  async listDeliveries(scope: TenantScope, q: { limit?: number | undefined; status?: DeliveryStatus | undefined; event_id?: string | undefined }) {
    const limit = q.limit ?? 20;
    const filtered = q.status !== undefined || q.event_id !== undefined;
    // Recent deliveries, newest first; filters look at the newest 1000 (retention is 30 days).
    const items = await this.deps.store.query(keys.walletPartition(scope), {
      skBeginsWith: keys.webhookDeliveryPrefix,
      descending: true,
      limit: filtered ? 1000 : limit,
    });
    return items
      .map(deliveryFromItem)
      .filter((d) => (q.status === undefined || d.status === q.status) && (q.event_id === undefined || d.event_id === q.event_id))
      .slice(0, limit);
  }

  async getDelivery(scope: TenantScope, deliveryId: string): Promise<DeliveryRecord> {
    const item = await this.deps.store.get(keys.webhookDelivery(scope, deliveryId));
    if (!item) throw new NotFoundError(`No webhook delivery ${deliveryId} in this wallet`);
    return deliveryFromItem(item);
  }

  /** A new delivery of the same event (same webhook-id) to the same URL; the original stays as it was. */
  async redeliver(scope: TenantScope, deliveryId: string): Promise<DeliveryRecord> {
    const original = await this.getDelivery(scope, deliveryId);
    if (inProgress(original, this.now())) throw new ConflictError('This delivery is still in progress', 'delivery_in_progress');
    if (!(await this.deps.store.get(keys.event(scope, original.event_id)))) {
      throw new ConflictError(`Event ${original.event_id} is past its ${DELIVERY_RETENTION_DAYS}-day retention`, 'event_expired');
    }
    const target = (await this.settings.load(scope)).targets.find((t) => t.url === original.url);
    if (!target || target.state !== 'active') {
      throw new ConflictError('The delivery URL is no longer an active webhook target of this wallet', 'target_inactive');
    }
    const at = this.now();
    const freshId = freshDeliveryId(original.url, at);
    const delivery: DeliveryRecord = {
      delivery_id: freshId,
      event_id: original.event_id,
      event_type: original.event_type,
      url: original.url,
      status: 'pending',
      attempt_count: 0,
      attempts: [],
      redelivery_of: original.delivery_id,
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
    };
    // One transaction: a stalled original is closed (so a later DLQ redrive of its job sends nothing),
    // the new delivery is recorded, and its first job is staged for the relay to queue.
    const stalled = original.status === 'pending' || original.status === 'retrying';
    const ops: WriteOp[] = [
      ...(stalled
        ? [
            {
              type: 'update',
              key: keys.webhookDelivery(scope, original.delivery_id),
              set: { status: 'failed', final_reason: `stalled; redelivered as ${freshId}`, updated_at: at.toISOString() },
              remove: ['next_attempt_at', 'next_enqueued'],
              condition: { equals: { attempt_count: original.attempt_count, status: original.status } },
            } as const,
          ]
        : []),
      { type: 'put', item: deliveryItem(scope, delivery, deliveryTtl(at)), condition: 'not_exists' },
      stagedJob(scope, freshId, at),
    ];
    try {
      await this.deps.store.write(ops);
    } catch (err) {
      if (stalled && err instanceof ConditionFailedError && err.failedIndexes.includes(0)) {
        throw new ConflictError('This delivery is still in progress', 'delivery_in_progress');
      }
      throw err;
    }
    return delivery;
  }
}
