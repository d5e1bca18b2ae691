import type { Context, DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import { newImageOf, processStreamInOrder } from '../../lib/adapters/stream-records';
import { eventFromItem } from '../../lib/events/publisher';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { enqueueJobs, jobsForEvent } from '../../lib/status-lists/jobs';
import { jobFromOutboxItem } from '../../lib/webhooks/records';
import { OUTBOUND_JOB_TYPE, outboundJobFromOutboxItem } from '../../lib/didcomm/outbound';
import { ISSUE_JOB_TYPE, issueJobFromOutboxItem } from '../../lib/didcomm/protocols/issue-credential-v2/handlers';
import { tenantMessageGroup } from '../../lib/fairness/share';
import { CRED_DEF_JOB_TYPE, credDefJobFromOutboxItem } from '../../lib/anoncreds/registry';
import { TABLE, walletPartitionKey, type QueueId } from '../../lib/service/resources';
import type { Item } from '../../lib/store/port';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';
import { buildJobQueue, buildStatusQueue } from '../shared/job-queue';
import { buildDispatcher } from '../shared/webhook-dispatcher';

/**
 * The outbox relay: the table's stream (filtered to new outbox items) → one delivery per active
 * target of an event's wallet, each queued as its own job, and staged jobs (redeliveries) queued as
 * they are. Status-list events also become status jobs (lib/status-lists/jobs.ts): re-publication of
 * changed lists, removal of deleted definitions. Each record is handled in its wallet's session. The first failed record is reported and
 * nothing after it runs, so Lambda retries from it; both paths are idempotent.
 */
/**
 * The stream carries every wallet's items, and IAM lets a session carry any wallet's tag: the wallet a
 * record is relayed for is the one whose partition holds it, the only one whose session could write it.
 */
function namesItsOwnWallet(item: Item, walletId: string): boolean {
  return item[TABLE.partitionKey] === walletPartitionKey(walletId);
}

/**
 * Outbox items that are jobs for a queue: DIDComm messages a committed decision sends
 * (lib/didcomm/outbound.ts), credential definitions to make (lib/anoncreds/registry.ts), holders'
 * checked credential requests to sign (lib/didcomm/protocols/issue-credential-v2/).
 */
const QUEUED_JOBS = [
  { what: 'DIDComm outbound job', type: OUTBOUND_JOB_TYPE, parse: outboundJobFromOutboxItem, queue: 'didcomm-outbound' },
  { what: 'AnonCreds job', type: CRED_DEF_JOB_TYPE, parse: credDefJobFromOutboxItem, queue: 'anoncreds' },
  { what: 'credential issue job', type: ISSUE_JOB_TYPE, parse: issueJobFromOutboxItem, queue: 'credential-issue' },
] as const satisfies readonly { what: string; type: string; parse: (item: Item) => { wallet_id: string } | null; queue: QueueId }[];

export function createHandler() {
  const deps = buildDeps('webhook-relay', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const dispatcher = buildDispatcher(deps, logger);
  const statusQueue = buildStatusQueue(deps);
  const queues = Object.fromEntries(QUEUED_JOBS.map((k) => [k.queue, buildJobQueue(deps, k.queue)])) as Record<(typeof QUEUED_JOBS)[number]['queue'], ReturnType<typeof buildJobQueue>>;

  const relay = async (r: DynamoDBRecord, batch: ReturnType<typeof dispatcher.forBatch>) => {
    const item = newImageOf(r);
    if (!item) return;
    if (item.type === 'event') {
      const event = eventFromItem(item);
      if (!namesItsOwnWallet(item, event.wallet_id)) {
        logger.error('outbox event names a wallet other than its partition; not relayed', { partition: item[TABLE.partitionKey], event_id: event.id, wallet_id: event.wallet_id });
        return;
      }
      // Status jobs first: a webhook target's trouble must not hold back a revocation's publication.
      const statusJobs = jobsForEvent(event);
      await enqueueJobs(statusQueue, statusJobs);
      const jobs = await inSession(tenantScope(event.wallet_id), () => batch.fanOut(event));
      logger.info('event relayed', { event_id: event.id, event_type: event.type, wallet_id: event.wallet_id, deliveries: jobs, status_jobs: statusJobs.length });
      return;
    }
    // A job written with a decision, relayed as written to its queue in its wallet's message group.
    for (const kind of QUEUED_JOBS) {
      if (item.type !== kind.type) continue;
      const job = kind.parse(item);
      if (!job) {
        logger.error(`malformed ${kind.what}; not queued`, { partition: item[TABLE.partitionKey], sort_key: item[TABLE.sortKey] });
        return;
      }
      if (!namesItsOwnWallet(item, job.wallet_id)) {
        logger.error(`${kind.what} names a wallet other than its partition; not queued`, { partition: item[TABLE.partitionKey], sort_key: item[TABLE.sortKey], wallet_id: job.wallet_id });
        return;
      }
      await queues[kind.queue].send([{ body: JSON.stringify(job), delaySeconds: 0, group: tenantMessageGroup(job.wallet_id) }]);
      logger.info(`${kind.what} queued`, { wallet_id: job.wallet_id, sort_key: item[TABLE.sortKey] });
      return;
    }
    const job = jobFromOutboxItem(item);
    if (job && !namesItsOwnWallet(item, job.wallet_id)) {
      logger.error('staged job names a wallet other than its partition; not queued', { partition: item[TABLE.partitionKey], delivery_id: job.delivery_id, wallet_id: job.wallet_id });
      return;
    }
    if (job) {
      await inSession(tenantScope(job.wallet_id), () => dispatcher.enqueueStaged(job));
      logger.info('staged job queued', { delivery_id: job.delivery_id, wallet_id: job.wallet_id });
    }
  };

  return async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    logger.addContext(context);
    const batch = dispatcher.forBatch(); // each wallet's webhook settings read once per batch
    return processStreamInOrder(event.Records, (r) => relay(r, batch), (r, err) =>
      logger.error('relay failed; the stream retries from this record', { error: err as Error, sequence_number: r.dynamodb?.SequenceNumber }),
    );
  };
}

export const handler = createHandler();
