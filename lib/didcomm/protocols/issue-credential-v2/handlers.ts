import type { EventPublisher } from '../../../events/publisher';
import { OUTBOX_JOB_SK_PREFIX } from '../../../service/resources';
import { keys, type TenantScope } from '../../../store/keys';
import type { ItemKey, ItemStore, WriteOp } from '../../../store/port';
import { ProtocolViolation, type AgentContext, type Decision, type Outbound } from '../../agent';
import * as z from 'zod';
import { publicKeyFromVerkey, verkeyFromDidKey, x25519PublicFromEd25519 } from '../../envelope';
import { didcommKeys, type StoredConnection } from '../../records';
import { targetUrlProblem } from '../../../webhooks/target-url';
import { threadOf } from '../common';
import type { CredentialFormat } from './formats';
import { ANONCREDS } from './anoncreds';
import { LD_PROOF } from './ld-proof';
import { attachmentFor, CREDENTIAL_ACK_TYPE, CREDENTIAL_PROBLEM_REPORT_TYPE, CredentialAck, CredentialProblemReport, problemReportMessage, REQUEST_CREDENTIAL_TYPE, RequestCredential } from './messages';
import { EXCHANGE_EVENTS, exchangeItem, exchangeKeys, exchangeView, storedExchangeFromItem, type ConnectionlessDelivery, type ExchangeState, type StoredExchange } from './records';

/**
 * The issuer side of Issue Credential 2.0, format-agnostic: the holder's request checked by its
 * format (pure) and queued for the issuing worker, which signs (issuing.ts); the holder's ack ends the
 * exchange; a problem report from either side abandons it. Every state change is one transaction with
 * its event (and the messages it sends, as outbox jobs).
 */

/** The formats the protocol knows, by the exchange's `format`. */
export const CREDENTIAL_FORMATS: Readonly<Record<string, CredentialFormat>> = { ld_proof: LD_PROOF, anoncreds: ANONCREDS };

/** The exchanges the agent reads by thread (a holder's message names only its thread). */
export interface ExchangeReader {
  byThread(scope: TenantScope, thid: string): Promise<StoredExchange | undefined>;
}

export function exchangeReader(store: ItemStore): ExchangeReader {
  return {
    async byThread(scope, thid) {
      const lookup = await store.get(exchangeKeys.thread(scope, thid), { consistent: true });
      if (typeof lookup?.exchange_id !== 'string') return undefined;
      const item = await store.get(exchangeKeys.exchange(scope, lookup.exchange_id), { consistent: true });
      return item ? storedExchangeFromItem(item) : undefined;
    },
  };
}

/** The outbox job that hands a request to the issuing worker (functions/workers/credential-issuer.ts). */
export const ISSUE_JOB_TYPE = 'credential_issue';
export const issueJobKey = (s: TenantScope, exchangeId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `${OUTBOX_JOB_SK_PREFIX}CRISS#${exchangeId}` });
const OUTBOX_TTL_SECONDS = 86_400;

export interface IssueJob {
  readonly v: 1;
  readonly wallet_id: string;
  readonly exchange_id: string;
}

export function parseIssueJob(value: unknown): IssueJob | null {
  const j = value as Partial<IssueJob> | null;
  return j && j.v === 1 && typeof j.wallet_id === 'string' && /^[0-9]{1,20}$/.test(j.wallet_id) && typeof j.exchange_id === 'string' && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(j.exchange_id) ? { v: 1, wallet_id: j.wallet_id, exchange_id: j.exchange_id } : null;
}

export function issueJobFromOutboxItem(item: Record<string, unknown>): IssueJob | null {
  return item.type === ISSUE_JOB_TYPE ? parseIssueJob(item.job) : null;
}

/** A state change of an exchange, conditioned on the version read, with its event. */
export function transition(events: EventPublisher, scope: TenantScope, x: StoredExchange, state: ExchangeState, at: Date, patch: Partial<StoredExchange> = {}): { next: StoredExchange; writes: WriteOp[] } {
  const next: StoredExchange = { ...x, ...patch, state, updated_at: at.toISOString() };
  return {
    next,
    writes: [
      { type: 'put', item: exchangeItem(scope, next), condition: { equals: { updated_at: x.updated_at, state: x.state } } },
      events.stage(scope, EXCHANGE_EVENTS[state], { ...exchangeView(next) }).op,
    ],
  };
}

const peerOf = (c: StoredConnection) => ({ endpoint: c.peer!.endpoint, recipientKeys: c.peer!.recipient_keys, routingKeys: c.peer!.routing_keys });

/** A message to the holder on the exchange's connection. */
export function toHolder(c: StoredConnection, message: Record<string, unknown>): Outbound {
  return { connectionId: c.connection_id, to: peerOf(c), senderVerkey: c.my_verkey, message };
}

/**
 * A message to the holder of a connectionless exchange, once its request named where to answer:
 * authcrypted from the invitation's key to the holder's `~service`, with our `~service` on it (RFC 0056).
 * Null before a request took the exchange.
 */
export function toConnectionlessHolder(x: StoredExchange, message: Record<string, unknown>): Outbound | null {
  const cl = x.connectionless;
  if (!cl?.holder) return null;
  return {
    // Outbound jobs name a connection for their logs; this one has none.
    connectionId: `connectionless:${x.credential_exchange_id}`,
    to: { endpoint: cl.holder.endpoint, recipientKeys: cl.holder.recipient_keys, routingKeys: cl.holder.routing_keys },
    senderVerkey: cl.service.recipientKeys[0]!,
    message: { ...message, '~service': cl.service },
  };
}

/** Abandons the exchange and tells the holder why (RFC 0453 problem report, `issuance-abandoned`): on connection `c`, or to a connectionless holder's service. */
export function abandon(events: EventPublisher, scope: TenantScope, x: StoredExchange, c: StoredConnection | null, at: Date, reason: string, patch: Partial<StoredExchange> = {}): Decision {
  const { next, writes } = transition(events, scope, x, 'abandoned', at, { ...patch, error_msg: reason.slice(0, 500) });
  const report = problemReportMessage(x.thread_id, 'issuance-abandoned', reason);
  const out = c?.peer ? toHolder(c, report) : toConnectionlessHolder(next, report);
  return { writes, outbound: out ? [out] : [] };
}

/**
 * What a holder's message came over: an active connection, or (connectionless) the key of the
 * invitation made for one exchange, with the key the envelope was authcrypted from (none: anoncrypt).
 */
export type HolderChannel =
  | { readonly kind: 'connection'; readonly connection: StoredConnection }
  | { readonly kind: 'connectionless'; readonly invitationId: number; readonly exchangeId: string; readonly senderVerkey: string | undefined };

/** Whether a holder's message on connection `c` belongs to exchange `x`. */
function onItsConnection(x: StoredExchange, c: StoredConnection): boolean {
  if (x.connection_id !== null) return x.connection_id === c.connection_id;
  // Waiting for a connection of our invitation: the first connection of it that answers takes it.
  return x.invitation_id !== null && c.invitation_id === x.invitation_id && x.connectionless === null;
}

/**
 * The exchange a message names by thread, if it belongs to the channel: a connection's own, or the one
 * exchange a connectionless invitation was made for. `pinned`: the message must come from the holder
 * whose request took the exchange (every connectionless message after the request).
 */
async function exchangeOf(ctx: AgentContext, thid: string, ch: HolderChannel, pinned: boolean): Promise<StoredExchange> {
  if (!ctx.exchanges) throw new ProtocolViolation('unsupported_message_type', 'this agent issues no credentials here');
  const x = await ctx.exchanges.byThread(ctx.scope, thid);
  if (ch.kind === 'connection') {
    if (!x || !onItsConnection(x, ch.connection)) throw new ProtocolViolation('unknown_thread', 'no credential exchange of this connection has this thread');
    return x;
  }
  if (!x || x.credential_exchange_id !== ch.exchangeId || x.connection_id !== null || x.invitation_id !== ch.invitationId || !x.connectionless) {
    throw new ProtocolViolation('unknown_thread', "this thread is not the exchange this invitation's key was made for");
  }
  if (pinned && (ch.senderVerkey === undefined || ch.senderVerkey !== x.connectionless.holder?.verkey)) {
    throw new ProtocolViolation('unauthenticated', 'not authcrypted by the holder whose request took this exchange');
  }
  return x;
}

const MAX_SERVICE_KEYS = 10;
/** The RFC 0056 `~service` a connectionless holder answers with, bounded (it comes from anyone). */
const HolderService = z.object({
  recipientKeys: z.array(z.string().min(1).max(512)).min(1).max(MAX_SERVICE_KEYS),
  routingKeys: z.array(z.string().min(1).max(512)).max(MAX_SERVICE_KEYS).optional(),
  serviceEndpoint: z.string().min(1).max(2048),
});

/** A base58 verkey or Ed25519 did:key as a base58 verkey of a point on the curve (packing to it works); null otherwise. */
function serviceVerkey(ref: string): string | null {
  try {
    const verkey = ref.startsWith('did:key:') ? verkeyFromDidKey(ref) : ref;
    x25519PublicFromEd25519(publicKeyFromVerkey(verkey));
    return verkey;
  } catch {
    return null;
  }
}

/**
 * The holder of a connectionless request: its `~service` (keys normalised, the endpoint through the
 * outbound URL rule, refused before anything is stored) and the key it was authcrypted from, which the
 * service must name (else a request could point our answers at someone else's keys and endpoint).
 */
function connectionlessHolder(ctx: AgentContext, raw: unknown, senderVerkey: string | undefined): NonNullable<ConnectionlessDelivery['holder']> {
  if (senderVerkey === undefined) throw new ProtocolViolation('unauthenticated', 'a connectionless request must be authcrypted: its sender key is what the rest of the thread is checked against');
  const service = raw !== null && typeof raw === 'object' && '~service' in raw ? HolderService.safeParse((raw as Record<string, unknown>)['~service']) : null;
  if (!service) throw new ProtocolViolation('no_service', 'a connectionless request needs a ~service (RFC 0056) to answer to');
  if (!service.success) throw new ProtocolViolation('bad_service', 'malformed ~service');
  const recipientKeys = service.data.recipientKeys.map(serviceVerkey);
  const routingKeys = (service.data.routingKeys ?? []).map(serviceVerkey);
  if (recipientKeys.includes(null) || routingKeys.includes(null)) throw new ProtocolViolation('bad_service', 'the ~service keys must be Ed25519 verkeys (base58) or did:key');
  if (!recipientKeys.includes(senderVerkey)) throw new ProtocolViolation('unauthenticated', 'the ~service does not name the key the request was sent from');
  const problem = (ctx.endpointProblem ?? strictEndpointRule)(service.data.serviceEndpoint);
  if (problem) throw new ProtocolViolation('bad_service', `the ~service endpoint ${problem}`);
  return { verkey: senderVerkey, endpoint: service.data.serviceEndpoint, recipient_keys: recipientKeys as string[], routing_keys: routingKeys as string[] };
}

/** Without a rule from the runtime, the strictest: https to a public host. */
const strictEndpointRule = (url: string) => targetUrlProblem(url, { allowLoopback: false });

/**
 * The holder's request: checked by the format against the offer, then queued for signing. Connectionless,
 * the first valid request takes the exchange (the write is conditioned on the state read, so of two
 * concurrent ones only one commits) and pins its sender key and service; any later request is dropped.
 */
export async function onRequest(ctx: AgentContext, raw: unknown, ch: HolderChannel): Promise<Decision> {
  const parsed = RequestCredential.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed request-credential');
  const m = parsed.data;
  const x = await exchangeOf(ctx, threadOf(m), ch, false);
  if (x.state !== 'offer-sent') throw new ProtocolViolation('stale', `a request on an exchange in state ${x.state}`);
  const c = ch.kind === 'connection' ? ch.connection : null;
  const bound: Partial<StoredExchange> = c ? { connection_id: c.connection_id } : { connectionless: { service: x.connectionless!.service, holder: connectionlessHolder(ctx, raw, ch.kind === 'connectionless' ? ch.senderVerkey : undefined) } };
  // Connectionless: the invitation is used up with the exchange's first request (its key stays: the thread's later messages come to it).
  const used: WriteOp[] = ch.kind === 'connectionless' ? [{ type: 'update', key: didcommKeys.invitation(ctx.scope, ch.invitationId), set: { state: 'done', updated_at: ctx.now.toISOString() }, condition: { equals: { state: 'await-response' } } }] : [];
  const format = CREDENTIAL_FORMATS[x.format];
  if (!format) throw new ProtocolViolation('unsupported_message_type', `no format ${x.format}`);
  const refuse = (reason: string): Decision => {
    const d = abandon(ctx.events, ctx.scope, x, c, ctx.now, reason, bound);
    return { writes: [...d.writes, ...used], outbound: d.outbound };
  };
  const attachment = attachmentFor(m, m['requests~attach'], format.requestFormat);
  if (attachment === undefined) return refuse(`the request carries no ${format.requestFormat} attachment (or one over the size bound)`);
  const check = format.checkRequest(x.offer, attachment);
  if (!check.ok) return refuse(check.problem);
  const { writes } = transition(ctx.events, ctx.scope, x, 'request-received', ctx.now, { ...bound, request: check.detail });
  const job: IssueJob = { v: 1, wallet_id: ctx.scope.walletId, exchange_id: x.credential_exchange_id };
  writes.push({ type: 'put', item: { ...issueJobKey(ctx.scope, x.credential_exchange_id), type: ISSUE_JOB_TYPE, job, ttl: Math.floor(ctx.now.getTime() / 1000) + OUTBOX_TTL_SECONDS }, condition: 'not_exists' }, ...used);
  return { writes, outbound: [] };
}

/** The holder stored the credential: done. */
export async function onAck(ctx: AgentContext, raw: unknown, ch: HolderChannel): Promise<Decision> {
  const parsed = CredentialAck.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed ack');
  const x = await exchangeOf(ctx, threadOf(parsed.data), ch, true);
  if (x.state !== 'credential-issued') throw new ProtocolViolation('stale', `an ack on an exchange in state ${x.state}`);
  return { writes: transition(ctx.events, ctx.scope, x, 'done', ctx.now).writes, outbound: [] };
}

/**
 * The holder gave up (or refused the credential): abandoned, with its reason. Connectionless, only
 * the holder whose request took the exchange can: before a request, anyone holding the invitation
 * could otherwise end it, so a report then is dropped.
 */
export async function onProblemReport(ctx: AgentContext, raw: unknown, ch: HolderChannel): Promise<Decision> {
  const parsed = CredentialProblemReport.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed problem report');
  const x = await exchangeOf(ctx, threadOf(parsed.data), ch, true);
  if (x.state === 'abandoned' || x.state === 'done' || x.state === 'credential-revoked') throw new ProtocolViolation('stale', `a problem report on an exchange in state ${x.state}`);
  const p = parsed.data;
  const reason = `the holder reported: ${p.description?.en ?? p.explain ?? p.description?.code ?? 'a problem'}`;
  return { writes: transition(ctx.events, ctx.scope, x, 'abandoned', ctx.now, { error_msg: reason.slice(0, 500) }).writes, outbound: [] };
}

/** Dispatch of the protocol's messages on an active connection, or to a connectionless invitation's key. */
export function onIssueCredentialMessage(ctx: AgentContext, type: string, raw: unknown, on: StoredConnection | HolderChannel): Promise<Decision> {
  const ch: HolderChannel = 'connection_id' in on ? { kind: 'connection', connection: on } : on;
  switch (type) {
    case REQUEST_CREDENTIAL_TYPE:
      return onRequest(ctx, raw, ch);
    case CREDENTIAL_ACK_TYPE:
      return onAck(ctx, raw, ch);
    case CREDENTIAL_PROBLEM_REPORT_TYPE:
      return onProblemReport(ctx, raw, ch);
    default:
      // A proposal: exchanges start with our offer (the API); a holder's proposal is not taken.
      throw new ProtocolViolation('unsupported_message_type', `unsupported message type ${type.slice(0, 100)}`);
  }
}

/** How many waiting exchanges one activation sends at most (the rest wait for the next connection). */
const MAX_PENDING_PER_ACTIVATION = 10;

/**
 * A connection of one of our invitations became active: the offers waiting for it (POST
 * /api/v1/credentials/json-ld with an invitation_id that had no connection yet) go out on it.
 */
export async function pendingOffers(store: ItemStore, events: EventPublisher, scope: TenantScope, c: StoredConnection, at: Date): Promise<Decision> {
  if (c.invitation_id === null || !c.peer) return { writes: [], outbound: [] };
  const pending = await store.query(keys.walletPartition(scope), { skBeginsWith: exchangeKeys.pendingPrefix(c.invitation_id), limit: MAX_PENDING_PER_ACTIVATION, consistent: true });
  const writes: WriteOp[] = [];
  const outbound: Outbound[] = [];
  for (const p of pending) {
    const item = await store.get(exchangeKeys.exchange(scope, String(p.exchange_id)), { consistent: true });
    writes.push({ type: 'delete', key: exchangeKeys.pending(scope, c.invitation_id, String(p.exchange_id)) });
    if (!item) continue;
    const x = storedExchangeFromItem(item);
    if (x.state !== 'offer-sent' || x.connection_id !== null || !x.offer_message) continue;
    const next: StoredExchange = { ...x, connection_id: c.connection_id, offer_message: null, updated_at: at.toISOString() };
    writes.push({ type: 'put', item: exchangeItem(scope, next), condition: { equals: { updated_at: x.updated_at, state: x.state } } });
    outbound.push(toHolder(c, x.offer_message));
  }
  return { writes, outbound };
}

