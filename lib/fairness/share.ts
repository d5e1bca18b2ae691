import { createHash } from 'node:crypto';
import type { QueueFairness } from '../service/resources';
import { keys, tenantScope, type TenantScope } from '../store/keys';
import { inSession } from '../store/session';
import type { ItemKey, ItemStore } from '../store/port';
import { InFlightLimiter, type Lease, type Slot } from './in-flight';

/**
 * One tenant's share of a shared worker (the numbers: `QUEUES[].fairness` in lib/service/resources.ts).
 * Every queue worker follows the same rule: its messages carry the wallet as SQS `MessageGroupId`
 * ({@link tenantMessageGroup}), so SQS fair queues serve quiet wallets first when one builds a
 * backlog; and each job runs only while holding a place under its wallet's caps ({@link FairShare}),
 * or goes back to the queue with a delay. The webhook worker adds per-target caps and the slow-target
 * circuit ({@link FairShare.runTo}), as does the DIDComm outbound worker.
 */

/** SQS `MessageGroupId` of a wallet's messages on a standard queue: the tenant SQS fair queues balance by. */
export function tenantMessageGroup(walletId: string): string {
  return `wallet-${walletId}`;
}

/** Which cap was full: the wallet's, one target's, a slow target's, or that of the wallet's slow targets together. */
export type Refusal = 'tenant' | 'target' | 'slow_target' | 'slow_targets';

/** The places a running job holds. */
export interface Pass {
  readonly lease: Lease;
  /** The target's counter (endpoint jobs): where its health is written when the job ends. */
  readonly targetKey?: ItemKey;
  /** The target was slow when the job was let in. */
  readonly slow: boolean;
}

/** The queue a deferred job goes back on (the workers' SQS queue port). */
export interface RequeueTarget {
  send(messages: readonly { readonly body: string; readonly delaySeconds: number; readonly group: string }[]): Promise<void>;
}

export type Admission = { readonly pass: Pass } | { readonly refused: Refusal };

/** How the target answered: how long it took, and whether it never did (timeout). */
export interface Answer {
  readonly durationMs: number;
  readonly timedOut: boolean;
}

const SLOW_UNTIL = 'slow_until';
/** SQS's longest message delay. */
const MAX_SQS_DELAY_SECONDS = 900;

export class FairShare {
  private readonly limiter: InFlightLimiter;
  private readonly now: () => number;

  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      /** The counters' name (the queue's id): one set of counters per worker. */
      readonly name: string;
      readonly fairness: QueueFairness;
      readonly now?: () => number;
      readonly newToken?: () => string;
      /** Told when places could not be given back after the work (they come free when their lease ends). */
      readonly onReleaseError?: (err: unknown) => void;
    },
  ) {
    this.now = deps.now ?? Date.now;
    this.limiter = new InFlightLimiter({
      store: deps.store,
      leaseMs: deps.fairness.leaseSeconds * 1000,
      now: this.now,
      ...(deps.newToken ? { newToken: deps.newToken } : {}),
    });
  }

  private tenantSlot(scope: TenantScope): Slot {
    return { key: keys.inFlight(scope, this.deps.name), cap: this.deps.fairness.perTenant };
  }

  /** A place under the wallet's cap. */
  async admit(scope: TenantScope): Promise<Admission> {
    const out = await this.limiter.acquire([this.tenantSlot(scope)]);
    return 'lease' in out ? { pass: { lease: out.lease, slow: false } } : { refused: 'tenant' };
  }

  /**
   * A place for a job to one of the wallet's endpoints: under the wallet's cap, then the target's cap
   * (1 while it is slow) and, when it is slow, the cap of the wallet's slow targets together. The
   * wallet's cap comes first: it is the one full when a wallet floods the worker, and a job refused
   * by it costs one write. A target turning slow between the read and the update can let one job more
   * in: the circuit bounds what slow targets hold, it is not an exact count.
   */
  async admitTo(scope: TenantScope, target: string): Promise<Admission> {
    const limits = this.deps.fairness.targets;
    if (!limits) throw new Error(`the ${this.deps.name} worker declares no per-target limits`);
    const tenant = await this.limiter.acquire([this.tenantSlot(scope)]);
    if ('full' in tenant) return { refused: 'tenant' };
    const targetKey = keys.inFlight(scope, `${this.deps.name}#t#${createHash('sha256').update(target).digest('hex').slice(0, 32)}`);
    let rest: Awaited<ReturnType<InFlightLimiter['acquire']>>;
    let slow: boolean;
    try {
      const state = await this.deps.store.get(targetKey, { consistent: false });
      slow = typeof state?.[SLOW_UNTIL] === 'number' && (state[SLOW_UNTIL] as number) > this.now();
      rest = await this.limiter.acquire(
        slow ? [{ key: targetKey, cap: limits.slow.perTarget }, { key: keys.inFlight(scope, `${this.deps.name}#slow`), cap: limits.slow.perTenant }] : [{ key: targetKey, cap: limits.perTarget }],
        tenant.lease,
      );
    } catch (err) {
      await this.limiter.release(tenant.lease).catch(() => undefined);
      throw err;
    }
    if ('full' in rest) {
      await this.limiter.release(tenant.lease);
      return { refused: slow ? (rest.full === 0 ? 'slow_target' : 'slow_targets') : 'target' };
    }
    return { pass: { lease: rest.lease, targetKey, slow } };
  }

  /**
   * Gives the places back. An endpoint job says how the target answered (nothing when no request was
   * made): slow or no answer opens the target's circuit for `slow.forSeconds`, a prompt one closes it.
   */
  async release(pass: Pass, answer?: Answer): Promise<void> {
    const slow = this.deps.fairness.targets?.slow;
    const notes =
      pass.targetKey && answer && slow
        ? [
            answer.timedOut || answer.durationMs >= slow.afterMs
              ? { key: pass.targetKey, set: { [SLOW_UNTIL]: this.now() + slow.forSeconds * 1000 } }
              : { key: pass.targetKey, remove: [SLOW_UNTIL] },
          ]
        : [];
    await this.limiter.release(pass.lease, notes);
  }

  /** Runs `work` holding a place under the wallet's cap; `refused` (nothing ran) when it is full. */
  async run<T>(scope: TenantScope, work: () => Promise<T>): Promise<{ readonly value: T } | { readonly refused: Refusal }> {
    const admission = await this.admit(scope);
    if ('refused' in admission) return admission;
    try {
      return { value: await work() };
    } finally {
      // The work is done: a failed give-back must not fail it (and have it run again).
      await this.release(admission.pass).catch((err) => this.deps.onReleaseError?.(err));
    }
  }

  /**
   * Runs `work` holding a place for a job to `target` ({@link admitTo}); `refused` (nothing ran) when a
   * cap is full. `work` reports how the target answered (`answered`), which the give-back records.
   */
  async runTo<T>(scope: TenantScope, target: string, work: (answered: (a: Answer) => void) => Promise<T>): Promise<{ readonly value: T } | { readonly refused: Refusal }> {
    const admission = await this.admitTo(scope, target);
    if ('refused' in admission) return admission;
    let answer: Answer | undefined;
    try {
      return { value: await work((a) => (answer = a)) };
    } finally {
      await this.release(admission.pass, answer).catch((err) => this.deps.onReleaseError?.(err));
    }
  }

  /**
   * Puts jobs a cap refused back on their queue (one send), each delayed by {@link deferSeconds} and
   * counting its deferral: no attempt ran, so a job is otherwise unchanged.
   */
  async requeue<J extends { readonly wallet_id: string; readonly deferrals?: number | undefined }>(queue: RequeueTarget, jobs: readonly J[], random: () => number = Math.random): Promise<{ readonly deferrals: number; readonly delay_seconds: number }[]> {
    const out = jobs.map((job) => ({ job, deferrals: (job.deferrals ?? 0) + 1, delay_seconds: this.deferSeconds(job.deferrals ?? 0, random) }));
    if (out.length > 0) await queue.send(out.map((o) => ({ body: JSON.stringify({ ...o.job, deferrals: o.deferrals }), delaySeconds: o.delay_seconds, group: tenantMessageGroup(o.job.wallet_id) })));
    return out.map(({ deferrals, delay_seconds }) => ({ deferrals, delay_seconds }));
  }

  /**
   * Seconds an over-cap job waits before it is looked at again, after `deferrals` earlier deferrals:
   * doubling from `defer.firstSeconds` up to `defer.maxSeconds`, ±25 % so that deferred jobs do not
   * all come back together.
   */
  deferSeconds(deferrals: number, random: () => number = Math.random): number {
    const { firstSeconds, maxSeconds } = this.deps.fairness.defer;
    const base = Math.min(maxSeconds, firstSeconds * 2 ** Math.min(Math.max(0, deferrals), 20));
    return Math.min(MAX_SQS_DELAY_SECONDS, Math.max(1, Math.round(base * (0.75 + 0.5 * random()))));
  }
}

/**
 * A batch worker's side of the rule (email, status): the batch's items grouped by wallet; each
 * wallet's items run one after another, in its session, holding one place under its cap (so the
 * cap counts the instances busy with the wallet); a wallet at its cap has all its items deferred,
 * without running any. A failing item does not stop the others.
 */
export async function runBatchFairly<T>(
  share: FairShare,
  items: readonly T[],
  opts: {
    readonly walletOf: (item: T) => string;
    readonly run: (item: T) => Promise<void>;
    /** Puts the items back on the queue, delayed; throwing fails them (SQS hands them over again). */
    readonly defer: (items: readonly T[], refusal: Refusal) => Promise<void>;
  },
): Promise<{ readonly failed: T[]; readonly deferred: T[] }> {
  const byWallet = new Map<string, T[]>();
  for (const item of items) {
    const wallet = opts.walletOf(item);
    byWallet.set(wallet, [...(byWallet.get(wallet) ?? []), item]);
  }
  const failed: T[] = [];
  const deferred: T[] = [];
  for (const [wallet, group] of byWallet) {
    const scope = tenantScope(wallet);
    let out: { readonly value: void } | { readonly refused: Refusal };
    try {
      out = await inSession(scope, () =>
        share.run(scope, async () => {
          for (const item of group) await opts.run(item).catch(() => failed.push(item));
        }),
      );
    } catch {
      failed.push(...group); // the wallet's counter could not be reached: nothing ran
      continue;
    }
    if ('refused' in out) {
      try {
        await opts.defer(group, out.refused);
        deferred.push(...group);
      } catch {
        failed.push(...group);
      }
    }
  }
  return { failed, deferred };
}
