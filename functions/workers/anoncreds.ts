import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { clKeyGenerator, CredDefWorker, type KeyGenerator } from '../../lib/anoncreds/cred-def-worker';
import { parseCredDefJob, type CredDefJob } from '../../lib/anoncreds/registry';
import { runBatchFairly } from '../../lib/fairness/share';
import { queueDefinition } from '../../lib/service/resources';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { buildDeps, createLogger } from '../shared/deps';
import { buildCredDefKeySealer } from '../shared/anoncreds-keys';
import { workerFairShare } from '../shared/fair-share';
import { buildJobQueue } from '../shared/job-queue';
import { walletSessions } from '../shared/sessions';

const QUEUE = queueDefinition('anoncreds');

/**
 * The AnonCreds worker: one credential definition's keys per message (lib/anoncreds/cred-def-worker.ts),
 * in its wallet's session. A wallet makes one definition at a time across all instances
 * (lib/fairness/share.ts); its other jobs go back to the queue with a delay. `generate` is the tests'
 * seam (precomputed safe primes); deployed, keys come from fresh safe primes.
 */
export function createHandler(overrides: { generate?: KeyGenerator } = {}) {
  const deps = buildDeps('anoncreds-worker', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const worker = new CredDefWorker({
    store: deps.store,
    events: deps.events,
    sealer: buildCredDefKeySealer(deps),
    generate: overrides.generate ?? clKeyGenerator(),
    maxReceives: QUEUE.maxReceiveCount,
  });
  const queue = buildJobQueue(deps, 'anoncreds');
  const { share, deferred } = workerFairShare(deps, logger, QUEUE.id);

  type Work = { readonly record: SQSRecord; readonly job: CredDefJob };

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    const work: Work[] = [];
    for (const record of event.Records) {
      const job = parseCredDefJob(record.body);
      try {
        if (!job) throw new Error('not a credential definition job');
        tenantScope(job.wallet_id);
        work.push({ record, job });
      } catch (err) {
        logger.error('not an AnonCreds job; dropped', { message_id: record.messageId, error: err as Error });
      }
    }
    const { failed } = await runBatchFairly(share, work, {
      walletOf: (w) => w.job.wallet_id,
      run: async ({ record, job }) => {
        const started = Date.now();
        try {
          const outcome = await inSession(tenantScope(job.wallet_id), () => worker.run(tenantScope(job.wallet_id), job, Number(record.attributes?.ApproximateReceiveCount ?? 1)));
          logger.info('credential definition job done', { wallet_id: job.wallet_id, definition_id: job.definition_id, outcome, ms: Date.now() - started });
        } catch (err) {
          logger.warn('credential definition not made; SQS tries again', { wallet_id: job.wallet_id, definition_id: job.definition_id, error: err as Error });
          throw err;
        }
      },
      defer: async (items, refusal) => {
        await share.requeue(queue, items.map(({ job }) => job));
        logger.info('credential definition jobs deferred: wallet at its cap', { wallet_id: items[0]!.job.wallet_id, jobs: items.length, refusal });
        deferred(refusal, items.length);
      },
    });
    return { batchItemFailures: failed.map((w) => ({ itemIdentifier: w.record.messageId })) };
  };
}

export const handler = createHandler();
