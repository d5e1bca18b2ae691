import { ChangeMessageVisibilityBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Redelivery } from '../didcomm/inbound-batch';

/**
 * {@link Redelivery} by SQS visibility: a message the worker gives back comes again after the
 * seconds asked, instead of the queue's whole visibility timeout. With the worker's own role (the
 * SQS event source grants ChangeMessageVisibility on its queue).
 */
export class SqsRedelivery implements Redelivery {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async later(entries: readonly { receiptHandle: string; seconds: number }[]): Promise<void> {
    for (let i = 0; i < entries.length; i += 10) {
      const chunk = entries.slice(i, i + 10);
      const out = await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((e, j) => ({ Id: String(j), ReceiptHandle: e.receiptHandle, VisibilityTimeout: Math.max(0, Math.min(43_200, Math.round(e.seconds))) })),
        }),
      );
      // Refused entries come back only after the queue's visibility timeout: the caller reports it.
      if (out.Failed?.length) throw new Error(`SQS refused ${out.Failed.length} visibility change(s): ${out.Failed.map((f) => f.Code).join(', ')}`);
    }
  }
}
