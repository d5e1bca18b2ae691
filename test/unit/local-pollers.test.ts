/**
 * The local runtime's pollers idle without busy polling: a queue poller long-polls for one message
 * once its queue is empty and goes back to batches when work comes; stopping aborts the long poll;
 * the stream poller's backoff is cut short by activity, never to less than its first pause.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { pollQueue, Wakeup } from '../../infra/local/pollers';

describe('Wakeup', () => {
  test('sleeps the whole pause when nothing happens', async () => {
    const t0 = Date.now();
    expect(await new Wakeup().sleep(200, 20)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  test('a wake cuts the pause short, but not below soonMs from the start', async () => {
    const w = new Wakeup();
    const t0 = Date.now();
    const slept = w.sleep(5000, 60);
    setTimeout(() => w.wake(), 5);
    expect(await slept).toBe(true);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(55);
    expect(took).toBeLessThan(1000);
  });

  test('a wake after soonMs ends the pause at once; abort ends it too', async () => {
    const w = new Wakeup();
    const t0 = Date.now();
    const slept = w.sleep(5000, 10);
    setTimeout(() => w.wake(), 80);
    expect(await slept).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    const abort = new AbortController();
    const t1 = Date.now();
    const aborted = w.sleep(5000, 10, abort.signal);
    setTimeout(() => abort.abort(), 20);
    expect(await aborted).toBe(false);
    expect(Date.now() - t1).toBeLessThan(1000);
  });
});

describe('pollQueue', () => {
  test('empty queue: one long poll for a single message; a message brings batches back; stop aborts the long poll', async () => {
    const receives: { max: number; wait: number }[] = [];
    const queue: { MessageId: string; ReceiptHandle: string; Body: string }[] = [];
    let pendingLongPoll: ((v: unknown) => void) | null = null;
    const deleted: string[] = [];
    const sqs = {
      send: async (cmd: { input: Record<string, any>; constructor: { name: string } }, opts?: { abortSignal?: AbortSignal }) => {
        if (cmd.constructor.name === 'DeleteMessageBatchCommand') {
          deleted.push(...cmd.input.Entries.map((e: { ReceiptHandle: string }) => e.ReceiptHandle));
          return {};
        }
        receives.push({ max: cmd.input.MaxNumberOfMessages, wait: cmd.input.WaitTimeSeconds });
        if (queue.length > 0) return { Messages: queue.splice(0, cmd.input.MaxNumberOfMessages) };
        if (cmd.input.WaitTimeSeconds === 0) return { Messages: [] };
        // A long poll on an empty queue: answered when the test puts a message, or aborted.
        return new Promise((resolve, reject) => {
          pendingLongPoll = resolve;
          opts?.abortSignal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
        });
      },
    } as unknown as SQSClient;
    const batches: number[] = [];
    const activity = new Wakeup();
    let woken = 0;
    const wake = activity.wake.bind(activity);
    activity.wake = () => {
      woken++;
      wake();
    };
    const errors: unknown[] = [];
    const poller = pollQueue({
      sqs,
      queueUrl: 'q',
      queueArn: 'arn:q',
      functionName: 'w',
      worker: async (event) => {
        batches.push(event.Records.length);
        return { batchItemFailures: [] };
      },
      batchSize: 10,
      concurrency: 1,
      onError: (e) => errors.push(e),
      activity,
    });
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(check()).toBe(true);
    };
    // Empty: a short batch poll, then a long poll for one message, and nothing more while it waits.
    await until(() => pendingLongPoll !== null);
    expect(receives).toEqual([
      { max: 10, wait: 0 },
      { max: 1, wait: 20 },
    ]);
    await new Promise((r) => setTimeout(r, 100));
    expect(receives).toHaveLength(2);

    // Work arrives: the long poll answers with one, then short polls take the rest in batches.
    for (let i = 0; i < 12; i++) queue.push({ MessageId: `m${i}`, ReceiptHandle: `r${i}`, Body: '{}' });
    const first = queue.shift()!;
    (pendingLongPoll as unknown as (v: unknown) => void)({ Messages: [first] });
    pendingLongPoll = null;
    await until(() => pendingLongPoll !== null);
    expect(batches).toEqual([1, 10, 1]);
    expect(receives.slice(2)).toEqual([
      { max: 10, wait: 0 },
      { max: 10, wait: 0 },
      { max: 10, wait: 0 },
      { max: 1, wait: 20 },
    ]);
    expect(deleted).toHaveLength(12);
    expect(woken).toBe(3);

    const t0 = Date.now();
    await poller.stop();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(errors).toEqual([]);
  });
});
