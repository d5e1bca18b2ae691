import { SQSClient } from '@aws-sdk/client-sqs';
import { guardSqs } from '../../lib/adapters/access-guard';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import { BulkEmailService } from '../../lib/email/bulk';
import { emailContracts } from '../../lib/email/contract';
import { emailOperations } from '../../lib/email/operations';
import { createGroupHandler } from '../../lib/http/router';
import { queueUrlEnvName } from '../../lib/service/resources';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('email', { sessions: walletSessions });
const queueUrl = process.env[queueUrlEnvName('email')];
if (!queueUrl) throw new Error(`${queueUrlEnvName('email')} is not set`);
const sqs = new SQSClient({});
if (deps.config.keyBackend === 'local') guardSqs(sqs, { fn: deps.fn, wallet: null }, (url) => (url === queueUrl ? 'email' : undefined));

export const handler = createGroupHandler({
  group: 'email',
  contracts: emailContracts,
  impls: emailOperations(new BulkEmailService({ store: deps.store, events: deps.events, queue: new SqsJobQueue(sqs, queueUrl) })),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
