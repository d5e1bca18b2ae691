import { createHash } from 'node:crypto';
import { ulid } from '../ids';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemStore, type WriteOp } from '../store/port';

export type TargetState = 'active' | 'disabled';

export interface WebhookTarget {
  readonly url: string;
  readonly state: TargetState;
  /** A target receives the events that happen from this time on (none from before it was added). */
  readonly added_at: string;
  readonly disabled_at?: string;
  readonly disabled_reason?: string;
}

/** A wallet's webhook settings: targets and the signing-secret generation(s). */
export interface WebhookSettings {
  /** Revision for optimistic concurrency; null while nothing is stored. */
  readonly rev: string | null;
  readonly targets: readonly WebhookTarget[];
  readonly secret_generation: number;
  /** During a rotation the previous secret also signs, until `previous_expires_at`. */
  readonly previous_generation?: number;
  readonly previous_expires_at?: string;
  readonly updated_at?: string;
}

const DEFAULT_SETTINGS: WebhookSettings = { rev: null, targets: [], secret_generation: 1 };

function settingsFromItem(item: Item | undefined): WebhookSettings {
  if (!item) return DEFAULT_SETTINGS;
  return {
    rev: item.rev as string,
    targets: (item.targets as WebhookTarget[]) ?? [],
    secret_generation: item.secret_generation as number,
    ...(item.previous_generation !== undefined ? { previous_generation: item.previous_generation as number } : {}),
    ...(item.previous_expires_at !== undefined ? { previous_expires_at: item.previous_expires_at as string } : {}),
    ...(item.updated_at !== undefined ? { updated_at: item.updated_at as string } : {}),
  };
}

export type SettingsChange = Omit<WebhookSettings, 'rev' | 'updated_at'>;

/** Reads and changes a wallet's settings item; changes are read-modify-write guarded by `rev`. */
export class WebhookSettingsRepo {
  constructor(
    private readonly store: ItemStore,
    private readonly now: () => Date,
  ) {}

  async load(scope: TenantScope): Promise<WebhookSettings> {
    return settingsFromItem(await this.store.get(keys.webhookSettings(scope)));
  }

  /** Applies `change` to the current settings; retried when another writer got there first. */
  async mutate(scope: TenantScope, change: (current: WebhookSettings) => SettingsChange): Promise<WebhookSettings> {
    for (let tries = 0; ; tries++) {
      const current = await this.load(scope);
      const next: WebhookSettings = { ...change(current), rev: ulid(), updated_at: this.now().toISOString() };
      try {
        await this.store.write([
          {
            type: 'put',
            item: { ...keys.webhookSettings(scope), type: 'webhook_settings', ...next },
            condition: current.rev === null ? 'not_exists' : { equals: { rev: current.rev } },
          },
        ]);
        return next;
      } catch (err) {
        if (!(err instanceof ConditionFailedError) || tries >= 4) throw err;
      }
    }
  }
}

/** Active targets; with `since`, only those added no later than that time (an event's created_at). */
export function activeTargets(settings: WebhookSettings, since?: string): WebhookTarget[] {
  return settings.targets.filter((t) => t.state === 'active' && (since === undefined || t.added_at <= since));
}

// ---- deliveries ----

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface AttemptRecord {
  readonly attempt: number;
  readonly at: string;
  readonly outcome: 'delivered' | 'http_error' | 'timeout' | 'network_error' | 'refused_address';
  readonly status_code?: number;
  readonly duration_ms: number;
  readonly error?: string;
  readonly response_snippet?: string;
}

export interface DeliveryRecord {
  readonly delivery_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly url: string;
  readonly status: DeliveryStatus;
  readonly attempt_count: number;
  readonly attempts: AttemptRecord[];
  readonly next_attempt_at?: string;
  readonly final_reason?: string;
  readonly redelivery_of?: string;
  readonly created_at: string;
  readonly updated_at: string;
}

export const DELIVERY_ID = /^dlv_[0-9A-HJKMNP-TV-Z]{26}_[0-9a-f]{8}$/;
export const DELIVERY_RETENTION_DAYS = 30;

/** The TTL (epoch seconds) of a delivery record written at `at`. */
export function deliveryTtl(at: Date): number {
  return Math.floor(at.getTime() / 1000) + DELIVERY_RETENTION_DAYS * 86400;
}

/** Secret generations that sign at `now`: the current one, and the previous one while its rotation grace lasts. */
export function signingGenerations(s: WebhookSettings, now: Date): number[] {
  const inGrace = s.previous_generation !== undefined && s.previous_expires_at !== undefined && Date.parse(s.previous_expires_at) > now.getTime();
  return inGrace ? [s.secret_generation, s.previous_generation!] : [s.secret_generation];
}

function urlTag(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 8);
}

/**
 * The first delivery of an event to a URL has an id derived from both, so a relay that runs twice
 * for one event finds the delivery it already made. Redeliveries get a fresh time-ordered id.
 */
export function deliveryIdFor(eventId: string, url: string): string {
  return `dlv_${eventId.slice(4)}_${urlTag(url)}`;
}

export function freshDeliveryId(url: string, at: Date): string {
  return `dlv_${ulid(at.getTime())}_${urlTag(url)}`;
}

const DELIVERY_FIELDS = [
  'delivery_id', 'event_id', 'event_type', 'url', 'status', 'attempt_count', 'attempts',
  'next_attempt_at', 'final_reason', 'redelivery_of', 'created_at', 'updated_at',
] as const;
const ATTEMPT_FIELDS = ['attempt', 'at', 'outcome', 'status_code', 'duration_ms', 'error', 'response_snippet'] as const;

function pick<K extends string>(source: Record<string, unknown>, fields: readonly K[]): Record<K, unknown> {
  const out = {} as Record<K, unknown>;
  for (const f of fields) if (source[f] !== undefined) out[f] = source[f];
  return out;
}

/** The record as the API shows it, fields in a stable order (storage does not keep one). */
export function deliveryFromItem(item: Item): DeliveryRecord {
  const d = pick(item, DELIVERY_FIELDS);
  d.attempts = ((item.attempts as Record<string, unknown>[] | undefined) ?? []).map((a) => pick(a, ATTEMPT_FIELDS));
  return d as unknown as DeliveryRecord;
}

export function deliveryItem(scope: TenantScope, d: DeliveryRecord, ttlSeconds: number): Item {
  return { ...keys.webhookDelivery(scope, d.delivery_id), type: 'webhook_delivery', wallet_id: scope.walletId, ttl: ttlSeconds, ...d };
}

/** The message on the webhook queue: one attempt of one delivery. */
export interface DeliveryJob {
  readonly v: 1;
  readonly wallet_id: string;
  readonly delivery_id: string;
  readonly attempt: number;
  /** Epoch ms before which the attempt must not run (delays longer than SQS's 15 minutes are chained). */
  readonly not_before?: number;
  /** Times this attempt was put back because its wallet or target was at its cap (none: absent). */
  readonly deferrals?: number;
}

export function parseJob(body: string): DeliveryJob | null {
  try {
    const j = JSON.parse(body) as Partial<DeliveryJob>;
    if (j.v !== 1 || typeof j.wallet_id !== 'string' || typeof j.delivery_id !== 'string' || !Number.isInteger(j.attempt) || j.attempt! < 1) return null;
    if (j.not_before !== undefined && typeof j.not_before !== 'number') return null;
    if (j.deferrals !== undefined && (!Number.isInteger(j.deferrals) || j.deferrals < 0)) return null;
    return j as DeliveryJob;
  } catch {
    return null;
  }
}

/** How long a staged job waits in the outbox for the relay (which picks it up within seconds). */
const STAGED_JOB_TTL_SECONDS = 86400;

/**
 * A delivery's first attempt as an outbox item, written in the same transaction as the delivery
 * record; the stream relay queues it (at least once — the worker drops duplicates by attempt count).
 */
export function stagedJob(scope: TenantScope, deliveryId: string, at: Date): WriteOp {
  const job: DeliveryJob = { v: 1, wallet_id: scope.walletId, delivery_id: deliveryId, attempt: 1 };
  return {
    type: 'put',
    condition: 'not_exists',
    item: { ...keys.outboxJob(scope, deliveryId, 1), type: 'delivery_job', job, ttl: Math.floor(at.getTime() / 1000) + STAGED_JOB_TTL_SECONDS },
  };
}

export function jobFromOutboxItem(item: Item): DeliveryJob | null {
  return item.type === 'delivery_job' ? parseJob(JSON.stringify(item.job)) : null;
}

/**
 * A work queue port (SQS in AWS and in the local runtime): the webhook, email and status queues.
 * `group` is the message's tenant (lib/fairness/share.ts `tenantMessageGroup`), sent as SQS
 * `MessageGroupId` so that fair queues keep one wallet's backlog from delaying the others'.
 */
export interface JobQueue {
  send(messages: readonly { readonly body: string; readonly delaySeconds: number; readonly group: string }[]): Promise<void>;
}
