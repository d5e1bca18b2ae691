import type { EventEnvelope } from '../events/envelope';
import { tenantScope, type TenantScope } from '../store/keys';
import { randomUUID } from 'node:crypto';
import { ConditionFailedError, type ItemKey, type ItemStore, type WriteOp } from '../store/port';
import type { JobQueue } from '../webhooks/records';
import { tenantMessageGroup } from '../fairness/share';
import { shardCount, SignerUnavailableError, type StatusListPublisher } from './publication';
import { LIST_TYPES, statusKeys, type ListType } from './records';

/**
 * Background work on status lists, as messages on the status queue. The outbox relay turns events into
 * jobs (at least once, since the events are written in the same transaction as the change):
 * - `status_list.entry.status_changed` → re-publish each list it touched, after {@link PUBLISH_DELAY_SECONDS}:
 *   the changes of a burst land before the first job runs, it signs once, and the rest find nothing new;
 * - `status_list.definition.deleted` → remove the definition's lists, shards, publications and entries.
 */
export const PUBLISH_DELAY_SECONDS = 1;

export type StatusJob = (
  | { readonly kind: 'publish'; readonly wallet_id: string; readonly definition_id: string; readonly list: number }
  | {
      readonly kind: 'cleanup';
      readonly wallet_id: string;
      readonly definition_id: string;
      readonly list_size: number;
      readonly shard_size: number;
      readonly lists: number;
      /** A continuation starts here: the lists before it are clean already. */
      readonly from_list?: number;
    }
) & {
  /** Times the job was put back because its wallet was at its cap (lib/fairness/share.ts). */
  readonly deferrals?: number;
};

export function jobsForEvent(event: EventEnvelope): StatusJob[] {
  const d = event.data as Record<string, unknown>;
  if (event.type === 'status_list.entry.status_changed') {
    const lists = Array.isArray(d.lists) ? (d.lists as number[]) : [d.list as number];
    return lists.map((list) => ({ kind: 'publish', wallet_id: event.wallet_id, definition_id: String(d.definition_id), list }));
  }
  if (event.type === 'status_list.definition.deleted') {
    return [{ kind: 'cleanup', wallet_id: event.wallet_id, definition_id: String(d.id), list_size: Number(d.list_size), shard_size: Number(d.shard_size), lists: Number(d.lists) }];
  }
  return [];
}

export async function enqueueJobs(queue: JobQueue, jobs: readonly StatusJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await queue.send(jobs.map((j) => ({ body: JSON.stringify(j), delaySeconds: j.kind === 'publish' ? PUBLISH_DELAY_SECONDS : 0, group: tenantMessageGroup(j.wallet_id) })));
}

export function parseJob(body: string): StatusJob {
  const j = JSON.parse(body) as StatusJob;
  if ((j.kind !== 'publish' && j.kind !== 'cleanup') || typeof j.wallet_id !== 'string' || typeof j.definition_id !== 'string') throw new Error('not a status-list job');
  if (j.deferrals !== undefined && (!Number.isInteger(j.deferrals) || j.deferrals < 0)) throw new Error('not a status-list job');
  tenantScope(j.wallet_id);
  return j;
}

/** What makes two jobs the same work: a batch runs each once. */
export function jobKey(j: StatusJob): string {
  return j.kind === 'publish' ? `p|${j.wallet_id}|${j.definition_id}|${j.list}` : `c|${j.wallet_id}|${j.definition_id}`;
}

/**
 * Re-publishes a list in each format it has been published in (the definition's list_type always):
 * verifiers of either format see the change. Nothing is signed when the stored publication shows it
 * already. The next list (the spare issuance moves to when this one fills) is signed too if it never
 * was, so its first verifier finds it ready.
 */
export async function republish(publisher: StatusListPublisher, scope: TenantScope, definitionId: string, list: number, onSkipped?: (reason: string) => void): Promise<number> {
  const def = await publisher.definition(scope, definitionId);
  if (!def) return 0; // deleted meanwhile: the cleanup job removes what is left
  let signed = 0;
  const work: [number, ListType][] = [...LIST_TYPES.map((f): [number, ListType] => [list, f]), [list + 1, def.list_type]];
  for (const [l, format] of work) {
    const current = await publisher.stored(scope, def.id, l, format);
    if (!current && format !== def.list_type) continue;
    if (l !== list && current) continue; // the spare is ready
    try {
      if ((await publisher.publish(scope, def, l, format, { current })).signed) signed++;
    } catch (e) {
      // The tenant removed the signer: retrying cannot help; PUT publish with another DID will.
      if (e instanceof SignerUnavailableError) {
        onSkipped?.(e.message);
        return signed;
      }
      throw e;
    }
  }
  return signed;
}

/** How long a worker may hold a list's lease before another may take over (beyond the worker's 60 s timeout). */
export const LEASE_SECONDS = 90;

/**
 * Re-publishes a list with at most one builder at a time, however many workers hold jobs for it (a
 * burst of revocations becomes many jobs, spread over concurrent invocations). The first takes the
 * list's lease and builds; the others only mark the lease "dirty" and are done. Before letting go,
 * the holder builds again if the lease was marked, so no change is left behind, and a burst costs one
 * signature (the rebuild finds the content already signed). A crashed holder's lease expires; its job
 * comes back from SQS and takes over.
 */
export async function republishCoalesced(
  store: ItemStore,
  publisher: StatusListPublisher,
  scope: TenantScope,
  definitionId: string,
  list: number,
  opts: {
    now?: () => Date;
    onSkipped?: (reason: string) => void;
    /** Epoch ms after which a holder still asked to look again hands the list to a new job (`requeue`) instead. */
    deadline?: number;
    requeue?: () => Promise<void>;
  } = {},
): Promise<{ builds: number; signed: number; coalesced: boolean; requeued?: true }> {
  const now = () => Math.floor((opts.now?.() ?? new Date()).getTime() / 1000);
  const key = statusKeys.publishLease(scope, definitionId, list);
  const owner = randomUUID();
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await store.write([{ type: 'put', item: { ...key, owner, until: now() + LEASE_SECONDS, dirty: false, ttl: now() + 86400 }, condition: { below: { until: now() } } }]);
    } catch (e) {
      if (!(e instanceof ConditionFailedError)) throw e;
      try {
        // Someone is building: tell them to look again, and leave it to them.
        await store.write([{ type: 'update', key, set: { dirty: true }, condition: { atLeast: { until: now() } } }]);
        return { builds: 0, signed: 0, coalesced: true };
      } catch (e2) {
        if (!(e2 instanceof ConditionFailedError)) throw e2;
        continue; // the lease ended in between: try to take it
      }
    }
    let builds = 0;
    let signed = 0;
    try {
      for (;;) {
        builds++;
        signed += await republish(publisher, scope, definitionId, list, opts.onSkipped);
        try {
          await store.write([{ type: 'delete', key, condition: { equals: { owner, dirty: false } } }]);
          return { builds, signed, coalesced: false };
        } catch (e) {
          if (!(e instanceof ConditionFailedError)) throw e;
        }
        if (opts.requeue && Date.now() > (opts.deadline ?? Number.POSITIVE_INFINITY)) {
          // Changes keep coming and our time is nearly up: a new job goes on, this one lets go.
          await opts.requeue();
          await store.write([{ type: 'delete', key, condition: { equals: { owner } } }]).catch(() => undefined);
          return { builds, signed, coalesced: false, requeued: true };
        }
        try {
          // Marked while we built: clear the mark, keep the lease, build again.
          await store.write([{ type: 'update', key, set: { dirty: false, until: now() + LEASE_SECONDS }, condition: { equals: { owner } } }]);
        } catch (e) {
          if (!(e instanceof ConditionFailedError)) throw e;
          return { builds, signed, coalesced: false }; // our lease expired and another worker took the list over
        }
      }
    } catch (e) {
      // Let go at once (only our own lease): the next job for this list builds instead of marking a
      // lease nobody works under; this job's message comes back from SQS.
      await store.write([{ type: 'update', key, set: { until: 0 }, condition: { equals: { owner } } }]).catch(() => undefined);
      throw e;
    }
  }
  throw new Error(`could not take or mark the publication lease of list ${list} of definition ${definitionId}`);
}

const CHUNK = 100;

/** Deletes keys in transactions of at most 100 (DynamoDB's limit); deleting an absent item is a no-op. */
async function deleteAll(store: ItemStore, keys: readonly ItemKey[]): Promise<void> {
  for (let i = 0; i < keys.length; i += CHUNK) {
    const ops: WriteOp[] = keys.slice(i, i + CHUNK).map((key) => ({ type: 'delete', key }));
    await store.write(ops);
  }
}

/**
 * Everything a deleted definition leaves (idempotent: a retried job finds less and deletes it). Works
 * until `deadline` (epoch ms) and then says it is not done: the worker queues the same job again, so a
 * definition of millions of entries is removed over several invocations, never timing one out.
 */
export async function cleanupDefinition(
  store: ItemStore,
  scope: TenantScope,
  job: Extract<StatusJob, { kind: 'cleanup' }>,
  deadline = Number.POSITIVE_INFINITY,
): Promise<{ removed: number; done: boolean; next: Extract<StatusJob, { kind: 'cleanup' }> }> {
  let removed = 0;
  const pk = statusKeys.partition(scope);
  for (;;) {
    if (Date.now() > deadline) return { removed, done: false, next: job };
    const page = await store.queryPage(pk, { skBeginsWith: statusKeys.entryPrefix(job.definition_id), limit: CHUNK, consistent: true });
    await deleteAll(store, page.items.map((i) => ({ PK: i.PK, SK: i.SK })));
    removed += page.items.length;
    if (!page.next) break;
  }
  // The counter last read decides how many lists exist now (issuance may have moved on since the event).
  const counter = await store.get(statusKeys.counter(scope, job.definition_id), { consistent: true });
  const next = typeof counter?.next === 'number' ? counter.next : 0;
  const lists = Math.max(job.lists, Math.ceil(next / job.list_size) + 1);
  const shards = shardCount(job);
  for (let list = job.from_list ?? 0; list < lists; list++) {
    if (Date.now() > deadline) return { removed, done: false, next: { ...job, from_list: list } };
    const keys = Array.from({ length: shards }, (_, s) => statusKeys.shard(scope, job.definition_id, list, s));
    for (let i = 0; i < keys.length; i += CHUNK) {
      const found = (await store.getMany(keys.slice(i, i + CHUNK))).map((item, j) => (item ? keys[i + j]! : null)).filter((k): k is ItemKey => k !== null);
      await deleteAll(store, found);
      removed += found.length;
    }
    await deleteAll(store, [...LIST_TYPES.map((f) => statusKeys.publication(scope, job.definition_id, list, f)), statusKeys.publishLease(scope, job.definition_id, list)]);
  }
  // Last: while the counter exists, a later run still knows how many lists there were.
  await deleteAll(store, [statusKeys.counter(scope, job.definition_id)]);
  return { removed, done: true, next: job };
}
