import { ulid } from 'ulid';
import { AppError, BadRequestError, NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import type { JobQueue } from '../webhooks/records';
import { EnvelopeError, envelopeRecipients } from './envelope';
import { didcommKeys } from './records';

/**
 * The public inbound endpoint's work (`POST /didcomm/{public_ref}`): bounded, and nothing decrypted
 * here. The media type and the envelope's shape are checked, its recipients looked up among the
 * wallet's keys in one read, and an envelope for one of them stored and queued for the worker in the
 * group of its recipient key (one connection's messages in order). An envelope for no key of this
 * wallet is answered like any other (202: no oracle for which keys exist), logged and not stored.
 */
export const INBOUND_MEDIA_TYPES = ['application/didcomm-envelope-enc', 'application/ssi-agent-wire', 'application/json'] as const;

/** The largest envelope taken (the route's body limit: larger is a 413 before this code runs). */
export const MAX_INBOUND_BYTES = 256 * 1024;

/** Stored envelopes wait at most this long for the worker (SQS keeps the job 4 days; a day covers retries). */
export const INBOUND_TTL_SECONDS = 86_400;

export interface InboundJob {
  readonly wallet_id: string;
  readonly inbound_id: string;
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(type: string) {
    super(415, 'unsupported_media_type', `Send an envelope as ${INBOUND_MEDIA_TYPES.join(', ')} (got ${type.slice(0, 80) || 'none'})`);
  }
}

export interface InboundDeps {
  readonly store: ItemStore;
  readonly queue: JobQueue;
  readonly now?: () => Date;
}

export type InboundResult = { readonly stored: true; readonly inboundId: string } | { readonly stored: false; readonly reason: string };

export class InboundService {
  private readonly now: () => Date;

  constructor(private readonly deps: InboundDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Media type as sent (parameters aside). */
  static checkMediaType(contentType: string): void {
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    if (!(INBOUND_MEDIA_TYPES as readonly string[]).includes(type)) throw new UnsupportedMediaTypeError(type);
  }

  /** Runs in the wallet's session (the path's public reference resolved to `scope`). */
  async accept(scope: TenantScope | null, envelope: unknown): Promise<InboundResult> {
    if (!scope) throw new NotFoundError('No such DIDComm endpoint', 'endpoint_not_found');
    let recipients: string[];
    try {
      recipients = envelopeRecipients(envelope, { maxBytes: MAX_INBOUND_BYTES });
    } catch (err) {
      if (err instanceof EnvelopeError) throw new BadRequestError(`Not a DIDComm v1 envelope: ${err.message}`, 'invalid_envelope');
      throw err;
    }
    const lookups = await this.deps.store.getMany(recipients.map((r) => didcommKeys.recipientKey(scope, r)));
    const index = lookups.findIndex((l) => l !== undefined);
    if (index < 0) return { stored: false, reason: 'not_for_us' };
    const at = this.now();
    const inboundId = ulid(at.getTime());
    await this.deps.store.write([
      {
        type: 'put',
        item: { PK: keys.walletPartition(scope), SK: `DCIN#${inboundId}`, type: 'didcomm_inbound', envelope: JSON.stringify(envelope), recipient: recipients[index]!, received_at: at.toISOString(), ttl: Math.floor(at.getTime() / 1000) + INBOUND_TTL_SECONDS },
        condition: 'not_exists',
      },
    ]);
    const job: InboundJob = { wallet_id: scope.walletId, inbound_id: inboundId };
    await this.deps.queue.send([{ body: JSON.stringify(job), delaySeconds: 0, group: `w${scope.walletId}-${recipients[index]!}` }]);
    return { stored: true, inboundId };
  }
}
