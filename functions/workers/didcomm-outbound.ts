import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PEER_DIDS } from '../../lib/didcomm/agent';
import { AgentRuntime } from '../../lib/didcomm/agent-runtime';
import { parseOutboundJob } from '../../lib/didcomm/outbound';
import { OutboundSender } from '../../lib/didcomm/outbound-sender';
import { tenantScope } from '../../lib/store/keys';
import { inSession } from '../../lib/store/session';
import { buildDeps, createLogger } from '../shared/deps';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { workerFairShare } from '../shared/fair-share';
import { buildJobQueue } from '../shared/job-queue';
import { walletSessions } from '../shared/sessions';
import { webhookTransport, type WebhookOverrides } from '../shared/webhook-transport';

/**
 * The DIDComm outbound worker: each SQS message is one attempt to send one message
 * (lib/didcomm/outbound-sender.ts), in its wallet's session: packed with the connection's key and
 * posted through the webhooks' SSRF-guarded transport, retried on the webhook schedule through new
 * delayed messages. Only our own faults fail a message (SQS redrives it to the DLQ after 5 receives).
 */
export function createHandler(overrides: WebhookOverrides = {}) {
  const deps = buildDeps('didcomm-outbound', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const { config } = deps;
  const runtime = new AgentRuntime({
    store: deps.store,
    events: deps.events,
    keys: buildDidcommKeyVault(deps),
    dids: PEER_DIDS,
    transport: webhookTransport(deps, overrides),
    timeoutMs: config.webhookTimeoutMs,
  });
  const { share, deferred } = workerFairShare(deps, logger, 'didcomm-outbound');
  const sender = new OutboundSender({
    runtime,
    store: deps.store,
    queue: buildJobQueue(deps, 'didcomm-outbound'),
    retryDelaysSeconds: config.webhookRetryDelaysSeconds,
    fairness: share,
    onDeferral: (refusal) => deferred(refusal),
    log: (message, extra) => logger.info(message, extra),
  });
  const processor = new BatchProcessor(EventType.SQS);

  const record = async (r: SQSRecord) => {
    const job = parseOutboundJob(r.body);
    if (!job) {
      // Not ours to retry: a malformed message would only walk to the DLQ.
      logger.error('not a DIDComm outbound job; dropped', { message_id: r.messageId });
      return;
    }
    await inSession(tenantScope(job.wallet_id), () => sender.run(job));
  };

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    return processPartialResponse(event, record, processor, { context });
  };
}

export const handler = createHandler();
