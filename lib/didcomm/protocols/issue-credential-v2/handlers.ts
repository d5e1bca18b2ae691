import type { EventPublisher } from '../../../events/publisher';
import { OUTBOX_JOB_SK_PREFIX } from '../../../service/resources';
import { keys, type TenantScope } from '../../../store/keys';
import type { ItemKey, ItemStore, WriteOp } from '../../../store/port';
import { ProtocolViolation, type AgentContext, type Decision, type Outbound } from '../../agent';
import type { StoredConnection } from '../../records';
import { threadOf } from '../common';
import type { CredentialFormat } from './formats';
import { ANONCREDS } from './anoncreds';
import { LD_PROOF } from './ld-proof';
import { attachmentFor, CREDENTIAL_ACK_TYPE, CREDENTIAL_PROBLEM_REPORT_TYPE, CredentialAck, CredentialProblemReport, problemReportMessage, REQUEST_CREDENTIAL_TYPE, RequestCredential } from './messages';
import { EXCHANGE_EVENTS, exchangeItem, exchangeKeys, exchangeView, storedExchangeFromItem, type ExchangeState, type StoredExchange } from './records';

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

/** Abandons the exchange and tells the holder why (RFC 0453 problem report, `issuance-abandoned`). */
export function abandon(events: EventPublisher, scope: TenantScope, x: StoredExchange, c: StoredConnection | null, at: Date, reason: string, patch: Partial<StoredExchange> = {}): Decision {
  const { writes } = transition(events, scope, x, 'abandoned', at, { ...patch, error_msg: reason.slice(0, 500) });
  return { writes, outbound: c?.peer ? [toHolder(c, problemReportMessage(x.thread_id, 'issuance-abandoned', reason))] : [] };
}

/** Whether a holder's message on connection `c` belongs to exchange `x`. */
function onItsConnection(x: StoredExchange, c: StoredConnection): boolean {
  if (x.connection_id !== null) return x.connection_id === c.connection_id;
  // Waiting for a connection of our invitation: the first connection of it that answers takes it.
  return x.invitation_id !== null && c.invitation_id === x.invitation_id;
}

async function exchangeOf(ctx: AgentContext, thid: string, c: StoredConnection): Promise<StoredExchange> {
  if (!ctx.exchanges) throw new ProtocolViolation('unsupported_message_type', 'this agent issues no credentials here');
  const x = await ctx.exchanges.byThread(ctx.scope, thid);
  if (!x || !onItsConnection(x, c)) throw new ProtocolViolation('unknown_thread', 'no credential exchange of this connection has this thread');
  return x;
}

/** The holder's request: checked by the format against the offer, then queued for signing. */
export async function onRequest(ctx: AgentContext, raw: unknown, c: StoredConnection): Promise<Decision> {
  const parsed = RequestCredential.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed request-credential');
  const m = parsed.data;
  const x = await exchangeOf(ctx, threadOf(m), c);
  if (x.state !== 'offer-sent') throw new ProtocolViolation('stale', `a request on an exchange in state ${x.state}`);
  const bound = { connection_id: c.connection_id };
  const format = CREDENTIAL_FORMATS[x.format];
  if (!format) throw new ProtocolViolation('unsupported_message_type', `no format ${x.format}`);
  const attachment = attachmentFor(m, m['requests~attach'], format.requestFormat);
  if (attachment === undefined) return abandon(ctx.events, ctx.scope, x, c, ctx.now, `the request carries no ${format.requestFormat} attachment (or one over the size bound)`, bound);
  const check = format.checkRequest(x.offer, attachment);
  if (!check.ok) return abandon(ctx.events, ctx.scope, x, c, ctx.now, check.problem, bound);
  const { writes } = transition(ctx.events, ctx.scope, x, 'request-received', ctx.now, { ...bound, request: check.detail });
  const job: IssueJob = { v: 1, wallet_id: ctx.scope.walletId, exchange_id: x.credential_exchange_id };
  writes.push({ type: 'put', item: { ...issueJobKey(ctx.scope, x.credential_exchange_id), type: ISSUE_JOB_TYPE, job, ttl: Math.floor(ctx.now.getTime() / 1000) + OUTBOX_TTL_SECONDS }, condition: 'not_exists' });
  return { writes, outbound: [] };
}

/** The holder stored the credential: done. */
export async function onAck(ctx: AgentContext, raw: unknown, c: StoredConnection): Promise<Decision> {
  const parsed = CredentialAck.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed ack');
  const x = await exchangeOf(ctx, threadOf(parsed.data), c);
  if (x.state !== 'credential-issued') throw new ProtocolViolation('stale', `an ack on an exchange in state ${x.state}`);
  return { writes: transition(ctx.events, ctx.scope, x, 'done', ctx.now).writes, outbound: [] };
}

/** The holder gave up (or refused the credential): abandoned, with its reason. */
export async function onProblemReport(ctx: AgentContext, raw: unknown, c: StoredConnection): Promise<Decision> {
  const parsed = CredentialProblemReport.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed problem report');
  const x = await exchangeOf(ctx, threadOf(parsed.data), c);
  if (x.state === 'abandoned' || x.state === 'done' || x.state === 'credential-revoked') throw new ProtocolViolation('stale', `a problem report on an exchange in state ${x.state}`);
  const p = parsed.data;
  const reason = `the holder reported: ${p.description?.en ?? p.explain ?? p.description?.code ?? 'a problem'}`;
  return { writes: transition(ctx.events, ctx.scope, x, 'abandoned', ctx.now, { error_msg: reason.slice(0, 500) }).writes, outbound: [] };
}

/** Dispatch of the protocol's messages on an active connection. */
export function onIssueCredentialMessage(ctx: AgentContext, type: string, raw: unknown, c: StoredConnection): Promise<Decision> {
  switch (type) {
    case REQUEST_CREDENTIAL_TYPE:
      return onRequest(ctx, raw, c);
    case CREDENTIAL_ACK_TYPE:
      return onAck(ctx, raw, c);
    case CREDENTIAL_PROBLEM_REPORT_TYPE:
      return onProblemReport(ctx, raw, c);
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

