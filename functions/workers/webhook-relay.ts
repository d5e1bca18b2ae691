import type { Context, DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import { newImageOf, processStreamInOrder } from '../../lib/adapters/stream-records';
import { eventFromItem } from '../../lib/events/publisher';
import { buildDeps, buildDispatcher, createLogger, type WebhookOverrides } from '../shared/deps';

/**
 * The outbox relay: the table's stream (filtered to new outbox items) → one delivery per active
 * target of the event's wallet, each queued as its own job. The first failed record is reported and
 * nothing after it runs, so Lambda retries from it; fan-out is idempotent, so retries never duplicate a delivery.
 */
export function createHandler(overrides: WebhookOverrides = {}) {
  const deps = buildDeps();
  const logger = createLogger(deps.config.serviceName);
  const dispatcher = buildDispatcher(deps, logger, overrides);

  const relay = async (r: DynamoDBRecord) => {
    const item = newImageOf(r);
    if (!item || item.type !== 'event') return;
    const event = eventFromItem(item);
    const jobs = await dispatcher.fanOut(event);
    logger.info('event relayed', { event_id: event.id, event_type: event.type, wallet_id: event.wallet_id, deliveries: jobs });
  };

  return async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    logger.addContext(context);
    return processStreamInOrder(event.Records, relay, (r, err) =>
      logger.error('relay failed; the stream retries from this record', { error: err as Error, sequence_number: r.dynamodb?.SequenceNumber }),
    );
  };
}

export const handler = createHandler();
