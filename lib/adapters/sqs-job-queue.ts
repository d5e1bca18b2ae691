import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../webhooks/records';

/**
 * {@link JobQueue} on an SQS standard queue: batches of 10, each message in its tenant's
 * `MessageGroupId` (SQS fair queues), and any entry SQS refuses is an error.
 */
export class SqsJobQueue implements JobQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(messages: readonly { body: string; delaySeconds: number; group: string }[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      const chunk = messages.slice(i, i + 10);
      const out = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          // No DelaySeconds when there is none: FIFO queues refuse a per-message delay.
          Entries: chunk.map((m, j) => ({ Id: String(j), MessageBody: m.body, ...(m.delaySeconds > 0 ? { DelaySeconds: m.delaySeconds } : {}), MessageGroupId: m.group })),
        }),
      );
      if (out.Failed?.length) {
        throw new Error(`SQS refused ${out.Failed.length} message(s): ${out.Failed.map((f) => f.Code).join(', ')}`);
      }
    }
  }
}
