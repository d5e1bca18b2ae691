import { SESClient } from '@aws-sdk/client-ses';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { guardSes } from '../../lib/adapters/access-guard';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import type { EmailJob } from '../../lib/email/bulk';
import type { Mailer } from '../../lib/email/mailer';
import { OfferMailer } from '../../lib/email/sender';
import { runBatchFairly } from '../../lib/fairness/share';
import { ExchangeService } from '../../lib/oid4vci/exchanges';
import { queueDefinition } from '../../lib/service/resources';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { tenantScope } from '../../lib/store/keys';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { workerFairShare } from '../shared/fair-share';
import { buildJobQueue } from '../shared/job-queue';
import { walletSessions } from '../shared/sessions';
import { SDK_CLIENT_DEFAULTS } from '../shared/sdk';

const QUEUE = queueDefinition('email');

/**
 * The email worker: each message is one recipient (lib/email/sender.ts), run in its wallet's session.
 * A message fails (and comes back) only when the mail could not be sent for a passing reason; the last
 * receive records the failure before the message goes to the DLQ. A batch's recipients are mailed one
 * wallet after another, each wallet's holding one place under its cap (lib/fairness/share.ts); those
 * of a wallet at its cap go back to the queue with a delay, so one wallet's bulk request never takes
 * every instance.
 */
export function createHandler(overrides: { mailer?: Mailer } = {}) {
  const deps = buildDeps('email-worker', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  // One attempt per call: sendWithBackoff owns the retries (the SDK's own would multiply them).
  const ses = new SESClient({ ...SDK_CLIENT_DEFAULTS, maxAttempts: 1 });
  if (deps.config.keyBackend === 'local') guardSes(ses, { fn: deps.fn, wallet: null });
  const mailer = overrides.mailer ?? new SesMailer(ses, deps.config.sesConfigurationSet ? { configurationSet: deps.config.sesConfigurationSet } : {});
  const refs = new PublicRefs(deps.store);
  const status = new StatusAllocator({ store: deps.store, events: deps.events, refs });
  const sender = new OfferMailer({
    store: deps.store,
    events: deps.events,
    exchanges: new ExchangeService({ store: deps.store, events: deps.events, refs, status }),
    mailer,
    from: deps.config.emailSender,
    maxReceives: QUEUE.maxReceiveCount,
  });
  const queue = buildJobQueue(deps, 'email');
  const { share, deferred } = workerFairShare(deps, logger, QUEUE.id);

  type Work = { readonly record: SQSRecord; readonly job: EmailJob };

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    const work: Work[] = [];
    for (const record of event.Records) {
      try {
        const job = JSON.parse(record.body) as EmailJob;
        tenantScope(job.wallet_id);
        work.push({ record, job });
      } catch (err) {
        logger.error('not an email job; dropped', { message_id: record.messageId, error: err as Error });
      }
    }
    const { failed } = await runBatchFairly(share, work, {
      walletOf: (w) => w.job.wallet_id,
      run: async ({ record, job }) => {
        try {
          const outcome = await sender.run(job, Number(record.attributes?.ApproximateReceiveCount ?? 1));
          logger.info('email job done', { wallet_id: job.wallet_id, request_id: job.request_id, index: job.index, outcome });
        } catch (err) {
          logger.warn('email not sent; SQS tries again', { wallet_id: job.wallet_id, request_id: job.request_id, index: job.index, error: err as Error });
          throw err;
        }
      },
      defer: async (items, refusal) => {
        await share.requeue(queue, items.map(({ job }) => job));
        logger.info('email jobs deferred: wallet at its cap', { wallet_id: items[0]!.job.wallet_id, jobs: items.length, refusal });
        deferred(refusal, items.length);
      },
    });
    return { batchItemFailures: failed.map((w) => ({ itemIdentifier: w.record.messageId })) };
  };
}

export const handler = createHandler();
