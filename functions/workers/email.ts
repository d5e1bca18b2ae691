import { SESClient } from '@aws-sdk/client-ses';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { guardSes } from '../../lib/adapters/access-guard';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import type { EmailJob } from '../../lib/email/bulk';
import type { Mailer } from '../../lib/email/mailer';
import { OfferMailer } from '../../lib/email/sender';
import { ExchangeService } from '../../lib/oid4vci/exchanges';
import { QUEUES } from '../../lib/service/resources';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const MAX_RECEIVES = QUEUES.find((q) => q.id === 'email')!.maxReceiveCount;

/**
 * The email worker: each message is one recipient (lib/email/sender.ts), run in its wallet's session.
 * A message fails (and comes back) only when the mail could not be sent for a passing reason; the last
 * receive records the failure before the message goes to the DLQ.
 */
export function createHandler(overrides: { mailer?: Mailer } = {}) {
  const deps = buildDeps('email-worker', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  // One attempt per call: sendWithBackoff owns the retries (the SDK's own would multiply them).
  const ses = new SESClient({ maxAttempts: 1 });
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
    maxReceives: MAX_RECEIVES,
  });

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    const failed: string[] = [];
    for (const r of event.Records) {
      let job: EmailJob;
      try {
        job = JSON.parse(r.body) as EmailJob;
        tenantScope(job.wallet_id);
      } catch (err) {
        logger.error('not an email job; dropped', { message_id: r.messageId, error: err as Error });
        continue;
      }
      try {
        const outcome = await inSession(tenantScope(job.wallet_id), () => sender.run(job, Number(r.attributes?.ApproximateReceiveCount ?? 1)));
        logger.info('email job done', { wallet_id: job.wallet_id, request_id: job.request_id, index: job.index, outcome });
      } catch (err) {
        logger.warn('email not sent; SQS tries again', { wallet_id: job.wallet_id, request_id: job.request_id, index: job.index, error: err as Error });
        failed.push(r.messageId);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

export const handler = createHandler();
