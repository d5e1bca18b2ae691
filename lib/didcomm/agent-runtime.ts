import { randomUUID } from 'node:crypto';
import type { EventPublisher } from '../events/publisher';
import type { TenantScope } from '../store/keys';
import type { Item, ItemStore } from '../store/port';
import type { AttemptOutcome } from '../webhooks/retry-policy';
import type { WebhookTransport } from '../webhooks/transport';
import { ProtocolViolation, type AgentContext, type AgentKeys, type Outbound, type PeerDids } from './agent';
import { decide, type Target } from './dispatch';
import { EnvelopeError, envelopeRecipients, packMessage, unpackMessage } from './envelope';
import { acceptInvitation } from './protocols/did-exchange/handlers';
import { sendBasicMessage } from './protocols/basic-message/handlers';
import { OutOfBandInvitation } from './protocols/out-of-band/messages';
import { outboundJobWrites, OutboundTooLargeError } from './outbound';
import { didcommKeys, invitationFromItem, messageFromItem, storedConnectionFromItem, type MessageRecord, type StoredConnection } from './records';
import { MAX_INBOUND_BYTES } from './inbound';
import { exchangeReader, pendingOffers } from './protocols/issue-credential-v2/handlers';

/**
 * The DIDComm agent of one wallet at work: an inbound envelope is unpacked with the key it names,
 * dispatched, and the decision committed in one transaction together with an outbox job per message
 * to send (lib/didcomm/outbound.ts); the outbound worker packs and posts them ({@link AgentRuntime.send}).
 * Nothing here knows SQS or Lambda: the workers in functions/ drive it.
 */
export interface AgentRuntimeDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly keys: AgentKeys;
  readonly dids: PeerDids;
  /** Posts an envelope; the webhooks' SSRF-guarded transport (only the outbound worker sends). */
  readonly transport?: WebhookTransport;
  readonly now?: () => Date;
  /** The largest envelope `receive` unpacks (default: what the public endpoint takes). */
  readonly maxEnvelopeBytes?: number;
  readonly timeoutMs: number;
  /**
   * Why a peer's endpoint is unacceptable, or null (the webhooks' target URL rule): one from an
   * invitation we accept, or a connectionless holder's `~service`. Refused at once rather than retried
   * for a day by the outbound worker's SSRF guard.
   */
  readonly endpointProblem?: (url: string) => string | null;
}

/** `outbound`: the messages the committed decision queued (their jobs were written with it; nothing more to do). */
export type InboundOutcome =
  | { readonly kind: 'committed'; readonly outbound: readonly Outbound[]; readonly type: string }
  | { readonly kind: 'dropped'; readonly reason: string; readonly detail: string };

/** Forward (Aries RFC 0094): how a message reaches a peer behind mediators. */
const FORWARD_TYPE = 'https://didcomm.org/routing/1.0/forward';

export class AgentRuntime {
  private readonly now: () => Date;

  constructor(private readonly deps: AgentRuntimeDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  context(scope: TenantScope, endpoint: string): AgentContext {
    return { scope, now: this.now(), endpoint, keys: this.deps.keys, dids: this.deps.dids, events: this.deps.events, exchanges: exchangeReader(this.deps.store), endpointProblem: this.deps.endpointProblem };
  }

  /**
   * One inbound envelope for the wallet of `scope`. A malformed, tampered or wrongly addressed
   * envelope, or a message its protocol refuses, is dropped with its reason and nothing is written.
   * `recipient`: the key the public endpoint already found the envelope to be for (lib/didcomm/inbound.ts),
   * looked up again alone rather than every recipient the envelope names.
   */
  async receive(scope: TenantScope, endpoint: string, envelope: unknown, recipient?: string): Promise<InboundOutcome> {
    const limits = { maxBytes: this.deps.maxEnvelopeBytes ?? MAX_INBOUND_BYTES };
    let recipients: string[];
    try {
      recipients = envelopeRecipients(envelope, limits);
    } catch (err) {
      return dropped(err);
    }
    // The lookup is read again: the invitation or connection may have gone since the envelope was stored.
    if (recipient !== undefined) recipients = recipients.includes(recipient) ? [recipient] : [];
    const lookups = await this.deps.store.getMany(recipients.map((r) => didcommKeys.recipientKey(scope, r)));
    const index = lookups.findIndex((l) => l !== undefined);
    if (index < 0) return { kind: 'dropped', reason: 'not_for_us', detail: 'no recipient key of this wallet' };
    const verkey = recipients[index]!;
    const lookup = lookups[index]!;
    const keyPair = await this.deps.keys.keyPair(scope.walletId, verkey);
    if (!keyPair) return { kind: 'dropped', reason: 'not_for_us', detail: 'the recipient key is not in the key vault' };
    let unpacked;
    try {
      unpacked = unpackMessage(envelope, keyPair, limits);
    } catch (err) {
      return dropped(err);
    }
    let target: Target | null = null;
    if (lookup.kind === 'invitation') {
      const item = await this.deps.store.get(didcommKeys.invitation(scope, Number(lookup.invitation_id)), { consistent: true });
      if (item) target = { kind: 'invitation', invitation: invitationFromItem(item), exchangeId: typeof item.exchange_id === 'string' ? item.exchange_id : null };
    } else if (lookup.kind === 'public-did') {
      // The DID the key serves now; none when the public DID is of a method without a service.
      if (typeof lookup.did !== 'string') return { kind: 'dropped', reason: 'not_for_us', detail: 'the public DID has no DIDComm service now' };
      target = { kind: 'public-did', did: lookup.did, verkey };
    } else if (lookup.kind === 'connection') {
      const item = await this.deps.store.get(didcommKeys.connection(scope, String(lookup.connection_id)), { consistent: true });
      if (item) target = { kind: 'connection', connection: storedConnectionFromItem(item) };
    }
    if (!target) return { kind: 'dropped', reason: 'not_for_us', detail: 'the key names a record that is gone' };
    const ctx = this.context(scope, endpoint);
    let decision;
    try {
      decision = await decide(ctx, { message: unpacked.message, senderVerkey: unpacked.senderVerkey, recipientVerkey: unpacked.recipientVerkey }, target);
    } catch (err) {
      if (err instanceof ProtocolViolation) return { kind: 'dropped', reason: err.problemCode, detail: err.message };
      throw err;
    }
    // A connection of one of our invitations became active: credential offers waiting for it go out with it.
    if (target.kind === 'connection' && target.connection.state !== 'active' && target.connection.invitation_id !== null) {
      const put = decision.writes.find((w) => w.type === 'put' && w.item.type === 'didcomm_connection' && w.item.state === 'active');
      if (put?.type === 'put') {
        const offers = await pendingOffers(this.deps.store, this.deps.events, scope, storedConnectionFromItem(put.item), ctx.now);
        decision = { writes: [...decision.writes, ...offers.writes], outbound: [...decision.outbound, ...offers.outbound] };
      }
    }
    let writes;
    try {
      writes = [...decision.writes, ...outboundJobWrites(scope, decision.outbound, this.now())];
    } catch (err) {
      if (err instanceof OutboundTooLargeError) return { kind: 'dropped', reason: 'too_large', detail: err.message };
      throw err;
    }
    try {
      if (writes.length > 0) await this.deps.store.write(writes);
    } catch (err) {
      // A replay, or a message racing another on the same record: the conditions refused it.
      if ((err as Error).name === 'ConditionFailedError') return { kind: 'dropped', reason: 'stale', detail: 'the records changed: a duplicate or a concurrent message' };
      throw err;
    }
    return { kind: 'committed', outbound: decision.outbound, type: String(unpacked.message['@type']) };
  }

  /** Accepts another agent's invitation (its JSON): the connection in state request, and the request's outbound job, in one transaction. */
  async acceptInvitation(scope: TenantScope, endpoint: string, invitation: unknown, opts: { label: string; alias: string | null }): Promise<{ connection: StoredConnection; outbound: readonly Outbound[] }> {
    const parsed = OutOfBandInvitation.safeParse(invitation);
    if (!parsed.success) throw new ProtocolViolation('invalid_invitation', `not an Out-of-Band invitation: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(invitation)'} ${i.message}`).join('; ').slice(0, 300)}`);
    const decision = await acceptInvitation(this.context(scope, endpoint), parsed.data, opts);
    for (const out of decision.outbound) {
      const problem = this.deps.endpointProblem?.(out.to.endpoint);
      if (problem) throw new ProtocolViolation('invalid_invitation', `the invitation's service endpoint ${problem}`);
    }
    await this.deps.store.write([...decision.writes, ...outboundJobWrites(scope, decision.outbound, this.now())]);
    return { connection: decision.connection, outbound: decision.outbound };
  }

  /**
   * A basic message on an active connection: stored as queued with its outbound job, in one
   * transaction that also requires the connection still active.
   */
  async sendMessage(scope: TenantScope, endpoint: string, c: StoredConnection, content: string): Promise<{ message: MessageRecord; outbound: readonly Outbound[] }> {
    const decision = sendBasicMessage(this.context(scope, endpoint), c, content);
    await this.deps.store.write([
      ...decision.writes,
      { type: 'check', key: didcommKeys.connection(scope, c.connection_id), condition: { equals: { state: 'active' } } },
      ...outboundJobWrites(scope, decision.outbound, this.now()),
    ]);
    return { message: decision.message, outbound: decision.outbound };
  }

  /**
   * The outcome of sending one of our basic messages, with its event (`message.sent`, or
   * `message.failed` with the reason), once: false when the message is gone or no longer queued.
   * `read`: its item as the sender read it before sending (the write's condition still decides).
   */
  async markMessage(scope: TenantScope, messageId: string, state: 'sent' | 'failed', reason?: string, read?: Item): Promise<boolean> {
    const key = didcommKeys.message(scope, messageId);
    const item = read ?? (await this.deps.store.get(key, { consistent: true }));
    if (!item || item.state !== 'queued') return false;
    const at = this.now().toISOString();
    const record: MessageRecord = { ...messageFromItem(item), state, updated_at: at };
    const failure = state === 'failed' ? { failure_reason: (reason ?? 'not delivered').slice(0, 500) } : {};
    try {
      await this.deps.store.write([
        { type: 'update', key, set: { state, updated_at: at, ...failure }, condition: { equals: { state: 'queued' } } },
        this.deps.events.stage(scope, state === 'sent' ? 'message.sent' : 'message.failed', { ...record, ...failure }).op,
      ]);
    } catch (err) {
      if ((err as Error).name === 'ConditionFailedError') return false;
      throw err;
    }
    return true;
  }

  /** Packs (authcrypt; wrapped in forwards for each routing key) and posts one message. */
  async send(scope: TenantScope, out: Outbound): Promise<SendResult> {
    if (!this.deps.transport) throw new Error('this agent runtime has no transport: only the outbound worker sends');
    const sender = await this.deps.keys.keyPair(scope.walletId, out.senderVerkey);
    if (!sender) return { ok: false, detail: 'our key for this connection is not in the key vault', outcome: null, durationMs: 0 };
    let packed = packMessage(out.message, [...out.to.recipientKeys], sender);
    let next = out.to.recipientKeys[0]!;
    for (const routingKey of out.to.routingKeys) {
      const forward = { '@type': FORWARD_TYPE, '@id': randomUUID(), to: next, msg: JSON.parse(Buffer.from(packed).toString('utf8')) as unknown };
      packed = packMessage(forward, [routingKey]);
      next = routingKey;
    }
    const result = await this.deps.transport.post({ url: out.to.endpoint, headers: { 'content-type': 'application/didcomm-envelope-enc' }, body: Buffer.from(packed).toString('utf8'), timeoutMs: this.deps.timeoutMs });
    const o = result.outcome;
    return { ok: o.kind === 'response' && o.status >= 200 && o.status < 300, detail: describe(o), outcome: o, durationMs: result.durationMs };
  }
}

/** What sending one message did: `outcome` null when nothing was posted (our key is missing). */
export interface SendResult {
  readonly ok: boolean;
  readonly detail: string;
  readonly outcome: AttemptOutcome | null;
  readonly durationMs: number;
}

function describe(o: AttemptOutcome): string {
  return o.kind === 'response' ? `response ${o.status}` : 'detail' in o ? `${o.kind} ${o.detail}` : o.kind;
}

function dropped(err: unknown): InboundOutcome {
  if (err instanceof EnvelopeError) return { kind: 'dropped', reason: err.code, detail: err.message };
  throw err;
}
