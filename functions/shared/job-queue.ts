import { SQSClient } from '@aws-sdk/client-sqs';
import { guardSqs } from '../../lib/adapters/access-guard';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import { queueUrlEnvName, type QueueId } from '../../lib/service/resources';
import type { JobQueue } from '../../lib/webhooks/records';
import type { Deps } from './deps';
import { SDK_CLIENT_DEFAULTS } from './sdk';

/** A work queue sent to with the function's own role (locally through the access guard). */
export function buildJobQueue(deps: Deps, id: QueueId): JobQueue {
  const queueUrl = process.env[queueUrlEnvName(id)];
  if (!queueUrl) throw new Error(`${queueUrlEnvName(id)} is not set`);
  const sqs = new SQSClient({ ...SDK_CLIENT_DEFAULTS });
  if (deps.config.keyBackend === 'local') guardSqs(sqs, { fn: deps.fn, wallet: null }, (url) => (url === queueUrl ? id : undefined));
  return new SqsJobQueue(sqs, queueUrl);
}

/** The status-list job queue (publications, deletions). */
export const buildStatusQueue = (deps: Deps): JobQueue => buildJobQueue(deps, 'status');
