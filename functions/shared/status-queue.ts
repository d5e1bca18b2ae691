import { SQSClient } from '@aws-sdk/client-sqs';
import { guardSqs } from '../../lib/adapters/access-guard';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import type { JobQueue } from '../../lib/webhooks/records';
import type { Deps } from './deps';

/** The status-list job queue (publications, deletions), sent to with the function's own role. */
export function buildStatusQueue(deps: Deps): JobQueue {
  const queueUrl = deps.config.statusQueueUrl;
  if (!queueUrl) throw new Error('STATUS_QUEUE_URL is not set');
  const sqs = new SQSClient({});
  if (deps.config.keyBackend === 'local') guardSqs(sqs, { fn: deps.fn, wallet: null }, (url) => (url === queueUrl ? 'status' : undefined));
  return new SqsJobQueue(sqs, queueUrl);
}
