import type { FairShare, Refusal } from '../fairness/share';
import { tenantScope } from '../store/keys';
import { inSession } from '../store/session';
import type { InboundHandled, InboundJob, InboundProcessor } from './inbound';

/**
 * One batch of the inbound FIFO queue. Written here rather than with Powertools' FIFO processor
 * because a wallet at its cap must be given back with a delay, which that processor cannot do.
 *
 * - Order: a message group is one recipient key (one connection); its messages run one after
 *   another, and when one fails, it and every later message of its group are given back, so the
 *   group resumes where it stopped (SQS FIFO hands nothing more of a group while any is in flight).
 * - Fairness: each wallet's messages run holding one place under its cap (`QUEUES` fairness of
 *   `didcomm-inbound`); a wallet at its cap has all its messages given back with a short, growing
 *   delay (a visibility change: FIFO messages take no delay of their own), without running any.
 * - Wallets of one batch run side by side, so a slow wallet does not hold another's messages.
 */
export interface InboundRecord {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly groupId: string;
  /** SQS ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
  readonly job: InboundJob | null;
}

export interface Redelivery {
  /** Makes the messages visible again after `seconds` (the batch reports them failed). */
  later(entries: readonly { readonly receiptHandle: string; readonly seconds: number }[]): Promise<void>;
}

export interface InboundBatchDeps {
  readonly share: FairShare;
  readonly processor: Pick<InboundProcessor, 'process'>;
  readonly redelivery: Redelivery;
  readonly onHandled: (record: InboundRecord, handled: InboundHandled) => void;
  readonly onFailed: (record: InboundRecord, err: unknown) => void;
  readonly onDeferred: (walletId: string, count: number, refusal: Refusal | 'unreachable') => void;
  readonly onJunk: (record: InboundRecord) => void;
  readonly onRedeliveryError: (err: unknown) => void;
}

/** A report (a log line) must not change what happens to a message. */
function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // the message's fate is decided; a failing report changes nothing
  }
}

/** Seconds before a failed message is tried again: 2, 4, 8 … up to 60. */
export const retrySeconds = (receiveCount: number) => Math.min(60, 2 ** Math.max(1, receiveCount));

/** The ids of the messages to report as failed (given back to the queue). */
export async function runInboundBatch(records: readonly InboundRecord[], deps: InboundBatchDeps): Promise<string[]> {
  const byWallet = new Map<string, InboundRecord[]>();
  for (const r of records) {
    if (!r.job) {
      deps.onJunk(r); // not ours to retry: dropped
      continue;
    }
    byWallet.set(r.job.wallet_id, [...(byWallet.get(r.job.wallet_id) ?? []), r]);
  }
  const failed: InboundRecord[] = [];
  const retry: { receiptHandle: string; seconds: number }[] = [];
  await Promise.all(
    [...byWallet].map(async ([walletId, mine]) => {
      const scope = tenantScope(walletId);
      const groups = new Map<string, InboundRecord[]>();
      for (const r of mine) groups.set(r.groupId, [...(groups.get(r.groupId) ?? []), r]);
      let out;
      try {
        out = await inSession(scope, () =>
          deps.share.run(scope, async () => {
            for (const group of groups.values()) {
              for (let i = 0; i < group.length; i++) {
                const r = group[i]!;
                let handled: InboundHandled;
                try {
                  handled = await deps.processor.process(scope, r.job!.inbound_id);
                } catch (err) {
                  quietly(() => deps.onFailed(r, err));
                  // This one and the rest of its group come back in order, after the same delay.
                  const seconds = retrySeconds(r.receiveCount);
                  for (const rest of group.slice(i)) {
                    failed.push(rest);
                    retry.push({ receiptHandle: rest.receiptHandle, seconds });
                  }
                  break;
                }
                quietly(() => deps.onHandled(r, handled));
              }
            }
          }),
        );
      } catch {
        // Nothing above throws once the work has begun (the reports are quiet, share.run keeps a failed
        // give-back to itself): only the wallet's counter could not be reached, and nothing ran.
        out = { refused: 'unreachable' as const };
      }
      if ('refused' in out) {
        const seconds = deps.share.deferSeconds(Math.max(0, Math.min(...mine.map((r) => r.receiveCount)) - 1));
        for (const r of mine) {
          failed.push(r);
          retry.push({ receiptHandle: r.receiptHandle, seconds });
        }
        deps.onDeferred(walletId, mine.length, out.refused);
      }
    }),
  );
  // Without the visibility change they would come back only after the queue's visibility timeout.
  // If it fails they still come back, after the visibility timeout: reported, not thrown.
  if (retry.length) await deps.redelivery.later(retry).catch((err: unknown) => quietly(() => deps.onRedeliveryError(err)));
  return failed.map((r) => r.messageId);
}
