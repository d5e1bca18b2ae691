import { ulid } from '../ids';
import * as z from 'zod';
import { OUTBOX_JOB_SK_PREFIX } from '../service/resources';
import { keys, type TenantScope } from '../store/keys';
import type { Item, ItemKey, WriteOp } from '../store/port';
import type { Outbound } from './agent';

/**
 * Durable outbound DIDComm messages. Every message a committed decision sends is an outbox job item
 * (`JOBQ#DCOUT#<ULID>`) written in the decision's own transaction: the table's stream hands it to the
 * relay (functions/workers/webhook-relay.ts), which queues its job on the `didcomm-outbound` queue,
 * and the worker (functions/workers/didcomm-outbound.ts) packs and posts it. A decision is never
 * committed without its messages, and no message leaves for a decision that was not committed.
 */

/**
 * The largest job (its JSON, UTF-8): SQS takes 256 KiB per message; the rest is room for the
 * attributes. A basic message's content is bounded far below (MAX_CONTENT), so only a malformed
 * decision could reach it.
 */
export const MAX_OUTBOUND_JOB_BYTES = 240 * 1024;

/** How long a job item waits in the outbox for the relay (which takes it within seconds). */
const OUTBOX_TTL_SECONDS = 86_400;

export const OUTBOUND_JOB_TYPE = 'didcomm_outbound';

const Text = (max: number) => z.string().min(1).max(max);

/** The message on the `didcomm-outbound` queue: one attempt to send one message. */
export const OutboundJob = z.object({
  v: z.literal(1),
  wallet_id: Text(32),
  job_id: Text(64),
  connection_id: Text(64),
  /** Our verkey on the connection: the message is authcrypted from it. */
  sender_verkey: Text(64),
  to: z.object({ endpoint: Text(2048), recipient_keys: z.array(Text(64)).min(1).max(20), routing_keys: z.array(Text(64)).max(20) }),
  message: z.record(z.string(), z.unknown()),
  /** Our basic message record, when the message is one: marked sent or failed by the worker. */
  message_id: Text(64).optional(),
  attempt: z.number().int().min(1),
  /** Epoch ms before which the attempt must not run (delays longer than SQS's 15 minutes are chained). */
  not_before: z.number().optional(),
  /** Times this attempt was put back because its wallet or endpoint was at its cap. */
  deferrals: z.number().int().min(0).optional(),
});
export type OutboundJob = z.output<typeof OutboundJob>;

export class OutboundTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(`the message to send is ${bytes} bytes as a job; at most ${MAX_OUTBOUND_JOB_BYTES}`);
    this.name = 'OutboundTooLargeError';
  }
}

export const outboundJobKey = (s: TenantScope, jobId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `${OUTBOX_JOB_SK_PREFIX}DCOUT#${jobId}` });

/** The first attempt's job of one outbound message. */
export function outboundJob(scope: TenantScope, out: Outbound, at: Date): OutboundJob {
  return {
    v: 1,
    wallet_id: scope.walletId,
    job_id: ulid(at.getTime()),
    connection_id: out.connectionId,
    sender_verkey: out.senderVerkey,
    to: { endpoint: out.to.endpoint, recipient_keys: [...out.to.recipientKeys], routing_keys: [...out.to.routingKeys] },
    message: out.message,
    ...(out.messageId ? { message_id: out.messageId } : {}),
    attempt: 1,
  };
}

export function jobBytes(job: OutboundJob): number {
  return Buffer.byteLength(JSON.stringify(job), 'utf8');
}

/** The outbox item of each outbound message, to write with the decision; throws {@link OutboundTooLargeError}. */
export function outboundJobWrites(scope: TenantScope, outbound: readonly Outbound[], at: Date): WriteOp[] {
  return outbound.map((out) => {
    const job = outboundJob(scope, out, at);
    const bytes = jobBytes(job);
    if (bytes > MAX_OUTBOUND_JOB_BYTES) throw new OutboundTooLargeError(bytes);
    return {
      type: 'put',
      condition: 'not_exists',
      item: { ...outboundJobKey(scope, job.job_id), type: OUTBOUND_JOB_TYPE, job, ttl: Math.floor(at.getTime() / 1000) + OUTBOX_TTL_SECONDS },
    } satisfies WriteOp;
  });
}

export function parseOutboundJob(body: string): OutboundJob | null {
  try {
    const parsed = OutboundJob.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The job an outbox item carries (null for any other item, or a malformed one). */
export function outboundJobFromOutboxItem(item: Item): OutboundJob | null {
  if (item.type !== OUTBOUND_JOB_TYPE) return null;
  const parsed = OutboundJob.safeParse(item.job);
  return parsed.success ? parsed.data : null;
}

/** The job as the runtime sends it. */
export function outboundOf(job: OutboundJob): Outbound {
  return {
    connectionId: job.connection_id,
    senderVerkey: job.sender_verkey,
    to: { endpoint: job.to.endpoint, recipientKeys: job.to.recipient_keys, routingKeys: job.to.routing_keys },
    message: job.message,
    ...(job.message_id ? { messageId: job.message_id } : {}),
  };
}
