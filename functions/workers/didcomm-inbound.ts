import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { SqsRedelivery } from '../../lib/adapters/sqs-redelivery';
import { PEER_DIDS } from '../../lib/didcomm/agent';
import { AgentRuntime } from '../../lib/didcomm/agent-runtime';
import { InboundProcessor, parseInboundJob } from '../../lib/didcomm/inbound';
import { runInboundBatch } from '../../lib/didcomm/inbound-batch';
import { queueUrlEnvName } from '../../lib/service/resources';
import { targetUrlProblem } from '../../lib/webhooks/target-url';
import { buildDeps, createLogger } from '../shared/deps';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { workerFairShare } from '../shared/fair-share';
import { walletSessions } from '../shared/sessions';
import { SDK_CLIENT_DEFAULTS } from '../shared/sdk';

/**
 * The DIDComm inbound worker: each message of the FIFO queue names an envelope the public endpoint
 * stored; the agent unpacks it with the key it names, dispatches it and commits the decision in the
 * wallet's session (lib/didcomm/agent-runtime.ts). Order per connection, fairness between wallets and
 * retries: lib/didcomm/inbound-batch.ts.
 */
// Replies are outbound jobs in the decision's transaction (lib/didcomm/outbound.ts): this worker posts nothing.
export function createHandler() {
  const deps = buildDeps('didcomm-worker', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const agent = new AgentRuntime({
    store: deps.store,
    events: deps.events,
    keys: buildDidcommKeyVault(deps),
    dids: PEER_DIDS,
    timeoutMs: deps.config.webhookTimeoutMs,
    // A connectionless holder's ~service endpoint: refused before anything naming it is stored.
    endpointProblem: (url) => targetUrlProblem(url, { allowLoopback: deps.config.webhookAllowLoopback }),
  });
  const processor = new InboundProcessor(deps.store, agent);
  const { share, deferred } = workerFairShare(deps, logger, 'didcomm-inbound');
  const queueUrl = process.env[queueUrlEnvName('didcomm-inbound')];
  if (!queueUrl) throw new Error(`${queueUrlEnvName('didcomm-inbound')} is not set`);
  const redelivery = new SqsRedelivery(new SQSClient({ ...SDK_CLIENT_DEFAULTS }), queueUrl);

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    const records = event.Records.map((r) => ({
      messageId: r.messageId,
      receiptHandle: r.receiptHandle,
      groupId: String(r.attributes.MessageGroupId ?? ''),
      receiveCount: Number(r.attributes.ApproximateReceiveCount ?? 1),
      job: parseInboundJob(r.body),
    }));
    const failed = await runInboundBatch(records, {
      share,
      processor,
      redelivery,
      onHandled: (r, h) => {
        const ids = { wallet_id: r.job!.wallet_id, inbound_id: r.job!.inbound_id };
        // Types and reasons only: never a message's content.
        if (h.kind === 'handled') {
          const o = h.outcome;
          if (o.kind === 'committed') logger.info('DIDComm message handled', { ...ids, type: o.type, outbound: o.outbound.length });
          else logger.info('DIDComm envelope dropped', { ...ids, reason: o.reason, detail: o.detail });
        } else if (h.kind === 'given_up') logger.error('DIDComm envelope given up after repeated failures', { wallet_id: r.job!.wallet_id, inbound_id: r.job!.inbound_id, attempts: h.attempts, error: h.error });
      },
      onFailed: (r, err) => logger.warn('DIDComm envelope failed; tried again', { wallet_id: r.job!.wallet_id, inbound_id: r.job!.inbound_id, error: err as Error }),
      onDeferred: (walletId, count, refusal) => {
        logger.info('DIDComm envelopes deferred: wallet at its cap', { wallet_id: walletId, count, refusal });
        if (refusal !== 'unreachable') deferred(refusal, count);
      },
      onJunk: (r) => logger.error('not a DIDComm inbound job; dropped', { message_id: r.messageId }),
      onRedeliveryError: (err) => logger.warn('visibility change failed: the messages come back after the visibility timeout', { error: err as Error }),
    });
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

export const handler = createHandler();
