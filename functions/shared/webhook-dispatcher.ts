import { SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { deferralMetric, webhookAttemptMetrics } from '../../lib/adapters/emf-metrics';
import { FairShare } from '../../lib/fairness/share';
import { queueDefinition } from '../../lib/service/resources';
import { guardSqs } from '../../lib/adapters/access-guard';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import { WebhookDispatcher } from '../../lib/webhooks/dispatcher';
import type { WebhookTransport } from '../../lib/webhooks/transport';
import type { Deps } from './deps';
import { SDK_CLIENT_DEFAULTS } from './sdk';

/** The relay/worker engine: the webhook queue, the retry schedule, and (worker) the transport, the share rule and metrics. */
export function buildDispatcher(
  deps: Deps,
  logger: Logger,
  worker?: { transport: WebhookTransport; metrics: Metrics },
): WebhookDispatcher {
  const { config } = deps;
  const queueUrl = config.webhookQueueUrl;
  if (!queueUrl) throw new Error('WEBHOOK_QUEUE_URL is not set');
  const sqs = new SQSClient({ ...SDK_CLIENT_DEFAULTS });
  if (config.keyBackend === 'local') guardSqs(sqs, { fn: deps.fn, wallet: null }, (url) => (url === queueUrl ? 'webhook' : undefined));
  return new WebhookDispatcher({
    store: deps.store,
    secrets: deps.secrets,
    queue: new SqsJobQueue(sqs, queueUrl),
    ...(worker
      ? {
          transport: worker.transport,
          onAttempt: webhookAttemptMetrics(worker.metrics),
          fairness: new FairShare({
            store: deps.store,
            name: 'webhook',
            fairness: queueDefinition('webhook').fairness,
            onReleaseError: (err) => logger.warn('in-flight place not given back; it frees when its lease ends', { error: err as Error }),
          }),
          onDeferral: deferralMetric(worker.metrics, 'webhook'),
        }
      : {}),
    retryDelaysSeconds: config.webhookRetryDelaysSeconds,
    timeoutMs: config.webhookTimeoutMs,
    log: (message, extra) => logger.info(message, extra),
  });
}
