import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { runBatchFairly } from '../../lib/fairness/share';
import { queueDefinition } from '../../lib/service/resources';
import { cleanupDefinition, enqueueJobs, jobKey, parseJob, republishCoalesced, type StatusJob } from '../../lib/status-lists/jobs';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { workerFairShare } from '../shared/fair-share';
import { buildKeyManager } from '../shared/issuer-keys';
import { walletSessions } from '../shared/sessions';
import { buildStatusQueue } from '../shared/job-queue';

/**
 * The status worker: re-publishes changed lists and removes deleted definitions' data, each job in its
 * wallet's session. A batch's jobs for the same list run once, and concurrent invocations coalesce on
 * the list's lease (one builder at a time: a revocation wave costs one signature per format); a failed
 * job fails every message that asked for it, and SQS redrives them (to the DLQ after 5 receives).
 * A batch's jobs run one wallet after another, each wallet's holding one place under its cap
 * (lib/fairness/share.ts); those of a wallet at its cap go back to the queue with a delay, so one
 * wallet's revocation storm or huge deletion never takes every instance.
 */
export function createHandler() {
  const deps = buildDeps('status-worker', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const publisher = new StatusListPublisher({ store: deps.store, keyManager: buildKeyManager(deps), events: deps.events, refs: new PublicRefs(deps.store) });
  const queue = buildStatusQueue(deps);
  const QUEUE = queueDefinition('status');
  const { share, deferred } = workerFairShare(deps, logger, QUEUE.id);

  const run = async (job: StatusJob) => {
    const scope = tenantScope(job.wallet_id);
    await inSession(scope, async () => {
      if (job.kind === 'publish') {
        const out = await republishCoalesced(deps.store, publisher, scope, job.definition_id, job.list, {
          deadline: deadline(),
          requeue: () => enqueueJobs(queue, [job]),
          onSkipped: (reason) => logger.warn('status list not re-published', { wallet_id: job.wallet_id, definition_id: job.definition_id, list: job.list, reason }),
        });
        logger.info('status list checked', { wallet_id: job.wallet_id, definition_id: job.definition_id, list: job.list, ...out });
      } else {
        // Leave time for the rest of the batch; what is left goes on in a new job.
        const { removed, done, next } = await cleanupDefinition(deps.store, scope, job, deadline());
        if (!done) await enqueueJobs(queue, [next]);
        logger.info('deleted status list definition cleaned up', { wallet_id: job.wallet_id, definition_id: job.definition_id, removed, done });
      }
    });
  };

  let remaining = () => 60_000;
  // Leave time for the rest of the batch: long work hands what is left to a new job.
  const deadline = () => Date.now() + Math.max(0, remaining() - 20_000);
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    remaining = () => context.getRemainingTimeInMillis();
    const parsed = event.Records.map((r) => {
      try {
        return { id: r.messageId, job: parseJob(r.body) };
      } catch (err) {
        logger.error('not a status-list job; dropped', { message_id: r.messageId, error: err as Error });
        return { id: r.messageId, job: null };
      }
    });
    // Each distinct job once, with the messages that asked for it.
    const byJob = new Map<string, { job: StatusJob; ids: string[] }>();
    for (const p of parsed) {
      if (!p.job) continue;
      const k = jobKey(p.job);
      const entry = byJob.get(k) ?? { job: p.job, ids: [] };
      entry.ids.push(p.id);
      byJob.set(k, entry);
    }
    const { failed } = await runBatchFairly(share, [...byJob.values()], {
      walletOf: (e) => e.job.wallet_id,
      run: async ({ job }) => {
        try {
          await run(job);
        } catch (err) {
          logger.error('status-list job failed; SQS retries it', { job, error: err as Error });
          throw err;
        }
      },
      defer: async (entries, refusal) => {
        await share.requeue(queue, entries.map((e) => e.job));
        logger.info('status-list jobs deferred: wallet at its cap', { wallet_id: entries[0]!.job.wallet_id, jobs: entries.length, refusal });
        deferred(refusal, entries.length);
      },
    });
    return { batchItemFailures: failed.flatMap((e) => e.ids).map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

export const handler = createHandler();
