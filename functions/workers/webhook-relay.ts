import type { Context, DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import { newImageOf } from '../../lib/adapters/stream-records';
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
    // By hand rather than Powertools' batch processor, which goes on past a failure: Lambda retries a
    // stream from the first failed record, so the records after it must not run now (their first
    // jobs would be queued twice).
    for (const r of event.Records) {
      try {
        await relay(r);
      } catch (err) {
        logger.error('relay failed; the stream retries from this record', { error: err as Error, sequence_number: r.dynamodb?.SequenceNumber });
        return { batchItemFailures: [{ itemIdentifier: r.dynamodb?.SequenceNumber ?? '' }] };
      }
    }
    return { batchItemFailures: [] };
  };
}

export const handler = createHandler();
