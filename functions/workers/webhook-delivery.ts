import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { serviceMetrics } from '../../lib/adapters/emf-metrics';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { parseJob } from '../../lib/webhooks/records';
import { buildDeps, createLogger } from '../shared/deps';
import { macSecrets } from '../shared/secrets';
import { walletSessions } from '../shared/sessions';
import { buildDispatcher } from '../shared/webhook-dispatcher';
import { webhookTransport, type WebhookOverrides } from '../shared/webhook-transport';

/**
 * The webhook worker: each SQS message is one attempt of one delivery, run in its wallet's session.
 * Receiver failures are recorded and retried through new delayed messages (so the schedule is ours,
 * not the visibility timeout's); only our own faults fail a message, which SQS redrives to the DLQ
 * after 5 receives.
 */
export function createHandler(overrides: WebhookOverrides = {}) {
  const deps = buildDeps('webhook-delivery', { secrets: macSecrets, sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const metrics = serviceMetrics(deps.config.serviceName);
  const dispatcher = buildDispatcher(deps, logger, { transport: webhookTransport(deps, overrides), metrics });
  const processor = new BatchProcessor(EventType.SQS);

  const record = async (r: SQSRecord) => {
    const job = parseJob(r.body);
    if (!job) throw new Error(`message ${r.messageId} is not a delivery job`);
    await inSession(tenantScope(job.wallet_id), () => dispatcher.runJob(job));
  };

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    return processPartialResponse(event, record, processor, { context });
  };
}

export const handler = createHandler();
