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
import { TABLE, walletPartitionKey } from '../../lib/service/resources';
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

export function createHandler() {
  const deps = buildDeps('webhook-relay', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const dispatcher = buildDispatcher(deps, logger);
  const statusQueue = buildStatusQueue(deps);
  const didcommQueue = buildJobQueue(deps, 'didcomm-outbound');
  const anoncredsQueue = buildJobQueue(deps, 'anoncreds');
  const issueQueue = buildJobQueue(deps, 'credential-issue');

  const relay = async (r: DynamoDBRecord) => {
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
      const jobs = await inSession(tenantScope(event.wallet_id), () => dispatcher.fanOut(event));
      logger.info('event relayed', { event_id: event.id, event_type: event.type, wallet_id: event.wallet_id, deliveries: jobs, status_jobs: statusJobs.length });
      return;
    }
    // A DIDComm message a committed decision sends (lib/didcomm/outbound.ts): its job as written.
    const outbound = outboundJobFromOutboxItem(item);
    if (!outbound && item.type === OUTBOUND_JOB_TYPE) {
      logger.error('malformed DIDComm outbound job; not queued', { partition: item[TABLE.partitionKey], sort_key: item[TABLE.sortKey] });
      return;
    }
    if (outbound) {
      if (!namesItsOwnWallet(item, outbound.wallet_id)) {
        logger.error('DIDComm outbound job names a wallet other than its partition; not queued', { partition: item[TABLE.partitionKey], job_id: outbound.job_id, wallet_id: outbound.wallet_id });
        return;
      }
      await didcommQueue.send([{ body: JSON.stringify(outbound), delaySeconds: 0, group: tenantMessageGroup(outbound.wallet_id) }]);
      logger.info('DIDComm outbound job queued', { job_id: outbound.job_id, wallet_id: outbound.wallet_id, connection_id: outbound.connection_id });
      return;
    }
    // A credential definition to make (lib/anoncreds/registry.ts): its job as written.
    const credDef = credDefJobFromOutboxItem(item);
    if (!credDef && item.type === CRED_DEF_JOB_TYPE) {
      logger.error('malformed AnonCreds job; not queued', { partition: item[TABLE.partitionKey], sort_key: item[TABLE.sortKey] });
      return;
    }
    if (credDef) {
      if (!namesItsOwnWallet(item, credDef.wallet_id)) {
        logger.error('AnonCreds job names a wallet other than its partition; not queued', { partition: item[TABLE.partitionKey], definition_id: credDef.definition_id, wallet_id: credDef.wallet_id });
        return;
      }
      await anoncredsQueue.send([{ body: JSON.stringify(credDef), delaySeconds: 0, group: tenantMessageGroup(credDef.wallet_id) }]);
      logger.info('AnonCreds job queued', { definition_id: credDef.definition_id, wallet_id: credDef.wallet_id });
      return;
    }
    // A holder's checked credential request, for the issuing worker to sign (lib/didcomm/protocols/issue-credential-v2/).
    const issue = issueJobFromOutboxItem(item);
    if (!issue && item.type === ISSUE_JOB_TYPE) {
      logger.error('malformed credential issue job; not queued', { partition: item[TABLE.partitionKey], sort_key: item[TABLE.sortKey] });
      return;
    }
    if (issue) {
      if (!namesItsOwnWallet(item, issue.wallet_id)) {
        logger.error('credential issue job names a wallet other than its partition; not queued', { partition: item[TABLE.partitionKey], exchange_id: issue.exchange_id, wallet_id: issue.wallet_id });
        return;
      }
      await issueQueue.send([{ body: JSON.stringify(issue), delaySeconds: 0, group: tenantMessageGroup(issue.wallet_id) }]);
      logger.info('credential issue job queued', { exchange_id: issue.exchange_id, wallet_id: issue.wallet_id });
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
    return processStreamInOrder(event.Records, relay, (r, err) =>
      logger.error('relay failed; the stream retries from this record', { error: err as Error, sequence_number: r.dynamodb?.SequenceNumber }),
    );
  };
}

export const handler = createHandler();
