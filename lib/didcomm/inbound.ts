import { ulid } from '../ids';
import { AppError, BadRequestError, NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import type { JobQueue } from '../webhooks/records';
import { EnvelopeError, envelopeRecipients } from './envelope';
import type { InboundOutcome } from './agent-runtime';
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

  /**
   * Runs in the wallet's session (the path's public reference resolved to `scope`). `endpoint` is the
   * URL the envelope was posted to: the wallet's endpoint, which the worker names in our DID documents.
   */
  async accept(scope: TenantScope | null, envelope: unknown, endpoint: string): Promise<InboundResult> {
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
        item: { ...inboundKey(scope, inboundId), type: 'didcomm_inbound', envelope: JSON.stringify(envelope), recipient: recipients[index]!, endpoint, attempts: 0, received_at: at.toISOString(), ttl: Math.floor(at.getTime() / 1000) + INBOUND_TTL_SECONDS },
        condition: 'not_exists',
      },
    ]);
    const job: InboundJob = { wallet_id: scope.walletId, inbound_id: inboundId };
    await this.deps.queue.send([{ body: JSON.stringify(job), delaySeconds: 0, group: `w${scope.walletId}-${recipients[index]!}` }]);
    return { stored: true, inboundId };
  }
}

/** Failed attempts after which the worker gives an envelope up (logged), rather than block its connection. */
export const MAX_INBOUND_ATTEMPTS = 3;

export const inboundKey = (scope: TenantScope, inboundId: string) => ({ PK: keys.walletPartition(scope), SK: `DCIN#${inboundId}` });

export function parseInboundJob(body: string): InboundJob | null {
  try {
    const v = JSON.parse(body) as Partial<InboundJob>;
    return typeof v.wallet_id === 'string' && /^[1-9][0-9]*$/.test(v.wallet_id) && typeof v.inbound_id === 'string' && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(v.inbound_id) ? { wallet_id: v.wallet_id, inbound_id: v.inbound_id } : null;
  } catch {
    return null;
  }
}

/** What became of one stored envelope. */
export type InboundHandled =
  | { readonly kind: 'gone' }
  | { readonly kind: 'handled'; readonly outcome: InboundOutcome }
  | { readonly kind: 'given_up'; readonly attempts: number; readonly error: string };

/**
 * The worker's side: a stored envelope handed to the agent, then removed. An envelope the agent
 * drops (tampered, replayed, not for us) is handled too. A failure of ours (a store or KMS error) is
 * counted on the stored envelope and thrown, so the queue hands it over again, in its place; after
 * {@link MAX_INBOUND_ATTEMPTS} it is given up and removed, so that one bad envelope does not hold its
 * connection's later messages for good.
 */
export class InboundProcessor {
  constructor(
    private readonly store: ItemStore,
    private readonly agent: { receive(scope: TenantScope, endpoint: string, envelope: unknown, recipient?: string): Promise<InboundOutcome> },
  ) {}

  async process(scope: TenantScope, inboundId: string): Promise<InboundHandled> {
    const key = inboundKey(scope, inboundId);
    const item = await this.store.get(key, { consistent: true });
    if (!item) return { kind: 'gone' };
    let outcome: InboundOutcome;
    try {
      outcome = await this.agent.receive(scope, String(item.endpoint), JSON.parse(String(item.envelope)) as unknown, String(item.recipient));
    } catch (err) {
      const attempts = Number(item.attempts ?? 0) + 1;
      if (attempts >= MAX_INBOUND_ATTEMPTS) {
        await this.store.write([{ type: 'delete', key }]);
        return { kind: 'given_up', attempts, error: (err as Error).message };
      }
      await this.store.write([{ type: 'update', key, set: { attempts }, condition: 'exists' }]).catch(() => undefined);
      throw err;
    }
    await this.store.write([{ type: 'delete', key }]);
    return { kind: 'handled', outcome };
  }
}
