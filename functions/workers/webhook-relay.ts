import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import { newImageOf } from '../../lib/adapters/stream-records';
import { eventFromItem } from '../../lib/events/publisher';
import { buildDeps, buildDispatcher, createLogger, type WebhookOverrides } from '../shared/deps';

/**
 * The outbox relay: the table's stream (filtered to new outbox items) → one delivery per active
 * target of the event's wallet, each queued as its own job. A failed record is reported so Lambda
 * retries from it; fan-out is idempotent, so retries never duplicate a delivery.
 */
export function createHandler(overrides: WebhookOverrides = {}) {
  const deps = buildDeps();
  const logger = createLogger(deps.config.serviceName);
  const dispatcher = buildDispatcher(deps, logger, overrides);
  const processor = new BatchProcessor(EventType.DynamoDBStreams);

  const record = async (r: DynamoDBRecord) => {
    const item = newImageOf(r);
    if (!item || item.type !== 'event') return;
    const event = eventFromItem(item);
    const jobs = await dispatcher.fanOut(event);
    logger.info('event relayed', { event_id: event.id, event_type: event.type, wallet_id: event.wallet_id, deliveries: jobs });
  };

  return async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    logger.addContext(context);
    // Stream order matters little here, but failures must stop at the failed record: sequential.
    return processPartialResponse(event, record, processor, { context, processInParallel: false });
  };
}

export const handler = createHandler();
