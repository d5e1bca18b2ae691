import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import type { Item } from '../store/port';

/** The new image of a DynamoDB stream record as a plain item (null for removals and key-only records). */
export function newImageOf(record: DynamoDBRecord): Item | null {
  const image = record.dynamodb?.NewImage;
  if (!image) return null;
  return unmarshall(image as Record<string, AttributeValue>) as Item;
}

/**
 * Runs the records in order and stops at the first that fails, reporting only it: Lambda retries a
 * stream from the first failed record, so none after it may run now (it would run twice). By hand,
 * because Powertools' batch processor goes on past a failure.
 */
export async function processStreamInOrder(
  records: readonly DynamoDBRecord[],
  handle: (record: DynamoDBRecord) => Promise<void>,
  onFailure: (record: DynamoDBRecord, err: unknown) => void,
): Promise<DynamoDBBatchResponse> {
  for (const record of records) {
    try {
      await handle(record);
    } catch (err) {
      onFailure(record, err);
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}
