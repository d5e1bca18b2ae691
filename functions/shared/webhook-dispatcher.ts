import { SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { webhookAttemptMetrics } from '../../lib/adapters/emf-metrics';
import { guardSqs } from '../../lib/adapters/access-guard';
import { NodeWebhookTransport } from '../../lib/adapters/node-webhook-transport';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import { WebhookDispatcher } from '../../lib/webhooks/dispatcher';
import type { Resolver } from '../../lib/webhooks/transport';
import type { Deps } from './deps';

/** Test seams of the webhook workers; only the local runtime's callers pass them. */
export interface WebhookOverrides {
  /** Answers DNS for the SSRF guard (tests inject chosen addresses). */
  readonly resolver?: Resolver;
}

/** The relay/worker engine: the webhook queue, the SSRF-guarded transport and the retry schedule. */
export function buildDispatcher(deps: Deps, logger: Logger, overrides: WebhookOverrides = {}, metrics?: Metrics): WebhookDispatcher {
  const { config } = deps;
  const queueUrl = config.webhookQueueUrl;
  if (!queueUrl) throw new Error('WEBHOOK_QUEUE_URL is not set');
  const sqs = new SQSClient({});
  if (config.keyBackend === 'local') guardSqs(sqs, { fn: deps.fn, wallet: null }, (url) => (url === queueUrl ? 'webhook' : undefined));
  return new WebhookDispatcher({
    store: deps.store,
    secrets: deps.secrets,
    queue: new SqsJobQueue(sqs, queueUrl),
    transport: new NodeWebhookTransport({
      allowLoopback: config.webhookAllowLoopback,
      ...(overrides.resolver ? { resolver: overrides.resolver } : {}),
      userAgent: `${config.serviceName}-webhooks/1`,
    }),
    retryDelaysSeconds: config.webhookRetryDelaysSeconds,
    timeoutMs: config.webhookTimeoutMs,
    log: (message, extra) => logger.info(message, extra),
    ...(metrics ? { onAttempt: webhookAttemptMetrics(metrics) } : {}),
  });
}
