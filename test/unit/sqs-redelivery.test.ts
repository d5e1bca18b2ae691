/**
 * SqsRedelivery: messages given back by the DIDComm inbound worker come again after the seconds asked
 * (chunks of 10, clamped to what SQS takes), and a refused entry is an error the worker reports.
 */
import { ChangeMessageVisibilityBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { SqsRedelivery } from '../../lib/adapters/sqs-redelivery';

const sqs = mockClient(SQSClient);
beforeEach(() => sqs.reset());

test('changes visibility in chunks of 10, each entry clamped to 0..43,200 s', async () => {
  sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
  const entries = Array.from({ length: 12 }, (_, i) => ({ receiptHandle: `r${i}`, seconds: i === 0 ? -5 : i === 1 ? 1e6 : i + 0.4 }));
  await new SqsRedelivery(new SQSClient({ region: 'us-east-1' }), 'https://q').later(entries);
  const calls = sqs.commandCalls(ChangeMessageVisibilityBatchCommand).map((c) => c.args[0].input);
  expect(calls.map((c) => c.Entries!.length)).toEqual([10, 2]);
  expect(calls[0]!.QueueUrl).toBe('https://q');
  expect(calls[0]!.Entries!.slice(0, 3)).toEqual([
    { Id: '0', ReceiptHandle: 'r0', VisibilityTimeout: 0 },
    { Id: '1', ReceiptHandle: 'r1', VisibilityTimeout: 43_200 },
    { Id: '2', ReceiptHandle: 'r2', VisibilityTimeout: 2 },
  ]);
});

test('an entry SQS refuses is an error (the message would wait the whole visibility timeout)', async () => {
  sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [{ Id: '0', Code: 'ReceiptHandleIsInvalid', SenderFault: true }] });
  await expect(new SqsRedelivery(new SQSClient({ region: 'us-east-1' }), 'https://q').later([{ receiptHandle: 'r', seconds: 2 }])).rejects.toThrow(/refused 1 .*ReceiptHandleIsInvalid/);
});
