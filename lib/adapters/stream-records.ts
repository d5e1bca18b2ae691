import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Item } from '../store/port';

/** The new image of a DynamoDB stream record as a plain item (null for removals and key-only records). */
export function newImageOf(record: DynamoDBRecord): Item | null {
  const image = record.dynamodb?.NewImage;
  if (!image) return null;
  return unmarshall(image as Record<string, AttributeValue>) as Item;
}
