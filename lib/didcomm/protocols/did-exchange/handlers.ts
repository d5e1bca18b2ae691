import { ulid } from '../../../ids';
import type { EventType } from '../../../events/envelope';
import { ProtocolViolation, type AgentContext, type Decision, type PeerService, type ResolvedPeer } from '../../agent';
import { connectionData, connectionItem, didcommKeys, type InvitationRecord, type StoredConnection } from '../../records';
import { newMessageId, threadOf, type Attachment } from '../common';
import { verkeyOfReference } from '../../envelope';
import type { InlineService, OutOfBandInvitation } from '../out-of-band/messages';
import { DIDEXCHANGE_1_0, DIDEXCHANGE_1_1 } from '../out-of-band/messages';
import { DidExchangeComplete, DidExchangeRequest, DidExchangeResponse, didExchangeType, ProblemReport, type DidExchangeVersion } from './messages';
import { AttachmentError, signAttachment, verifyAttachment } from './signed-attachment';
import { DIDCOMM_SERVICE_FRAGMENT } from '../../../dids/didcomm-service';
import { qualify } from '../../../dids/records';

/**
 * DID Exchange 1.1 and 1.0 (Aries RFC 0023), both roles. Each handler reads what it is given and
 * returns a {@link Decision}; the worker commits it in one transaction. Conditions on the records'
 * state make a replayed or concurrent message fail that transaction instead of acting twice.
 */

/** The first DIDComm v1 service with an http(s) endpoint, keys as verkeys (lib/didcomm/did-peer.ts maps references). */
export function peerServiceOf(resolved: ResolvedPeer): PeerService {
  for (const s of resolved.services) {
    if (!/^https?:\/\//.test(s.serviceEndpoint) || s.recipientVerkeys.length === 0 || s.routingVerkeys.length !== s.routingKeys.length) continue;
    return { endpoint: s.serviceEndpoint, recipientKeys: s.recipientVerkeys, routingKeys: s.routingVerkeys };
  }
  throw new ProtocolViolation('invalid_did_doc', `no DIDComm service with an http(s) endpoint in the document of ${resolved.did.slice(0, 80)}`);
}

function inlineServiceOf(s: InlineService): PeerService {
  const recipientKeys = s.recipientKeys.map(verkeyOfReference);
  const routingKeys = (s.routingKeys ?? []).map(verkeyOfReference);
  if (!/^https?:\/\//.test(s.serviceEndpoint) || recipientKeys.includes(undefined) || routingKeys.includes(undefined)) throw new ProtocolViolation('invalid_invitation', 'the invitation service needs an http(s) endpoint and did:key or verkey keys');
  return { endpoint: s.serviceEndpoint, recipientKeys: recipientKeys as string[], routingKeys: routingKeys as string[] };
}

/**
 * The peer's DID and document: did:peer:2 and :4 resolve from the DID itself; anything else needs an
 * attached document, signed by `signers` (the invitation key) or, when none are given, by a key of that
 * document itself.
 */
function resolveTheirs(ctx: AgentContext, did: string, attached: Attachment | undefined, signers: readonly string[] | null): ResolvedPeer {
  try {
    if (/^did:peer:[24]/.test(did)) return ctx.dids.resolveDidPeer(did);
    if (!attached?.data.base64) throw new ProtocolViolation('invalid_did_doc', `${did.slice(0, 60)} does not resolve and no DID document is attached`);
    const doc = JSON.parse(Buffer.from(attached.data.base64.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8')) as unknown;
    const resolved = ctx.dids.resolveAttachedDidDoc(did, doc);
    verifyAttachment(attached, signers ?? resolved.verkeys);
    return resolved;
  } catch (err) {
    if (err instanceof ProtocolViolation) throw err;
    if (err instanceof AttachmentError) throw new ProtocolViolation('invalid_did_doc', `DID document attachment: ${err.message}`);
    throw new ProtocolViolation('invalid_did_doc', `cannot resolve ${did.slice(0, 60)}: ${(err as Error).message}`);
  }
}

function staged(ctx: AgentContext, type: EventType, c: StoredConnection) {
  return ctx.events.stage(ctx.scope, type, connectionData(c)).op;
}

async function newPairwiseDid(ctx: AgentContext): Promise<{ verkey: string; did: string }> {
  const { verkey } = await ctx.keys.createKey(ctx.scope.walletId);
  const created = ctx.dids.createDidPeer4({ verkey, serviceEndpoint: ctx.endpoint });
  return { verkey, did: created.longForm };
}

/** Where a request we answer came from: one of our invitations, or the implicit invitation of our public DID. */
interface RequestSource {
  /** Our verkey the request was encrypted to: it signs our new DID in the response. */
  readonly invitationKey: string;
  readonly invitationMsgId: string;
  readonly mode: 'once' | 'multi';
  readonly invitationId: number | null;
  readonly alias: string | null;
}

/** A new connection in state response, and the response signed with the invitation key: what both kinds of invitation answer. */
async function answerRequest(ctx: AgentContext, req: DidExchangeRequest, version: DidExchangeVersion, from: RequestSource): Promise<Decision & { connection: StoredConnection }> {
  const theirs = resolveTheirs(ctx, req.did, req['did_doc~attach'], null);
  const peer = peerServiceOf(theirs);
  const invitationKey = await ctx.keys.keyPair(ctx.scope.walletId, from.invitationKey);
  if (!invitationKey) throw new Error(`the invitation key ${from.invitationKey} is missing from the key vault`);
  const mine = await newPairwiseDid(ctx);
  const thid = threadOf(req);
  const at = ctx.now.toISOString();
  const connection: StoredConnection = {
    connection_id: ulid(ctx.now.getTime()),
    state: 'response',
    rfc23_state: 'response-sent',
    their_label: req.label ?? null,
    their_did: theirs.did,
    my_did: mine.did,
    their_role: 'invitee',
    invitation_key: from.invitationKey,
    invitation_msg_id: from.invitationMsgId,
    invitation_mode: from.mode,
    connection_protocol: version === '1.1' ? 'didexchange/1.1' : 'didexchange/1.0',
    alias: from.alias,
    invitation_id: from.invitationId,
    error_msg: null,
    created_at: at,
    updated_at: at,
    my_verkey: mine.verkey,
    peer: { endpoint: peer.endpoint, recipient_keys: peer.recipientKeys, routing_keys: peer.routingKeys },
    thid,
    pthid: req['~thread']?.pthid ?? null,
  };
  // 1.1 and 1.0 alike: the new DID, signed by the invitation key (Credo requires did_rotate~attach on every response).
  const response = {
    '@type': didExchangeType(version, 'response'),
    '@id': newMessageId(),
    '~thread': { thid, pthid: connection.pthid },
    did: mine.did,
    'did_rotate~attach': signAttachment(mine.did, invitationKey),
  };
  return {
    writes: [
      { type: 'put', item: connectionItem(ctx.scope, connection), condition: 'not_exists' },
      { type: 'put', item: { ...didcommKeys.recipientKey(ctx.scope, mine.verkey), type: 'didcomm_key', kind: 'connection', connection_id: connection.connection_id }, condition: 'not_exists' },
      staged(ctx, 'connection.response', connection),
    ],
    outbound: [{ connectionId: connection.connection_id, to: peer, senderVerkey: mine.verkey, message: response }],
    connection,
  };
}

function parseRequest(raw: unknown): DidExchangeRequest {
  const parsed = DidExchangeRequest.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('request_not_accepted', 'malformed DID Exchange request');
  return parsed.data;
}

/** We invited: a request answering our invitation (found by the key it was encrypted to). */
export async function onRequest(ctx: AgentContext, raw: unknown, version: DidExchangeVersion, invitation: InvitationRecord): Promise<Decision & { connection: StoredConnection }> {
  const req = parseRequest(raw);
  if (req['~thread']?.pthid !== invitation.invitation_msg_id) throw new ProtocolViolation('request_not_accepted', 'the request does not name this invitation (pthid)');
  if (!invitation.multi_use && invitation.state !== 'await-response') throw new ProtocolViolation('request_not_accepted', 'this single-use invitation was used already');
  const decision = await answerRequest(ctx, req, version, {
    invitationKey: invitation.invitation_key,
    invitationMsgId: invitation.invitation_msg_id,
    mode: invitation.multi_use ? 'multi' : 'once',
    invitationId: invitation.invitation_id,
    alias: invitation.alias,
  });
  const at = ctx.now.toISOString();
  const connectionId = decision.connection.connection_id;
  const invitationLookup = didcommKeys.recipientKey(ctx.scope, invitation.invitation_key);
  decision.writes.push({ type: 'put', item: { ...didcommKeys.invitationConnection(ctx.scope, invitation.invitation_id, connectionId), type: 'didcomm_invitation_connection', connection_id: connectionId }, condition: 'not_exists' });
  if (invitation.multi_use) {
    // The invitation must still exist (not deleted meanwhile).
    decision.writes.push({ type: 'check', key: invitationLookup, condition: 'exists' });
  } else {
    // Used once: done, and its key no longer leads anywhere (a second request is dropped, and a concurrent one fails here).
    decision.writes.push({ type: 'update', key: didcommKeys.invitation(ctx.scope, invitation.invitation_id), set: { state: 'done', updated_at: at }, condition: { equals: { state: 'await-response' } } });
    decision.writes.push({ type: 'delete', key: invitationLookup, condition: 'exists' });
  }
  return decision;
}

/**
 * Whether a request's `pthid` names our public DID as an implicit invitation (RFC 0023): the DID
 * itself (a did:sov nym also bare, as older agents write it), or the DID URL of its DIDComm service.
 */
export function namesPublicDid(pthid: string | undefined, did: string): boolean {
  if (pthid === undefined) return false;
  return pthid === did || qualify(pthid) === did || pthid === `${did}#${DIDCOMM_SERVICE_FRAGMENT}`;
}

/**
 * A request to our public DID's DIDComm key (an implicit invitation, RFC 0023/0434): a new connection
 * each time, as a multi-use invitation makes them, with no invitation record; the response is signed
 * with the public DID's DIDComm key. `did`: the public DID the key serves now.
 */
export async function onImplicitRequest(ctx: AgentContext, raw: unknown, version: DidExchangeVersion, pub: { readonly did: string; readonly verkey: string }): Promise<Decision & { connection: StoredConnection }> {
  const req = parseRequest(raw);
  const pthid = req['~thread']?.pthid;
  if (!namesPublicDid(pthid, pub.did)) throw new ProtocolViolation('request_not_accepted', 'the request does not name the public DID this key serves (pthid)');
  const decision = await answerRequest(ctx, req, version, { invitationKey: pub.verkey, invitationMsgId: pthid!, mode: 'multi', invitationId: null, alias: null });
  // The key must still serve this DID (the public DID not moved meanwhile).
  decision.writes.push({ type: 'check', key: didcommKeys.recipientKey(ctx.scope, pub.verkey), condition: { equals: { kind: 'public-did', did: pub.did } } });
  return decision;
}

/** We were invited and asked: their response, found by our key on the connection. */
export function onResponse(ctx: AgentContext, raw: unknown, c: StoredConnection): Decision {
  const parsed = DidExchangeResponse.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('response_not_accepted', 'malformed DID Exchange response');
  const res = parsed.data;
  if (c.their_role !== 'inviter' || c.state !== 'request') throw new ProtocolViolation('response_not_accepted', `a response on a connection in state ${c.state}`);
  if (res['~thread'].thid !== c.thid) throw new ProtocolViolation('response_not_accepted', 'the response is not on our request thread');
  if (!c.invitation_key) throw new ProtocolViolation('response_not_accepted', 'no invitation key to check the response with');
  let theirs: ResolvedPeer;
  const rotate = res['did_rotate~attach'];
  if (rotate) {
    try {
      const signed = verifyAttachment(rotate, [c.invitation_key]).toString('utf8');
      if (signed !== res.did) throw new ProtocolViolation('response_not_accepted', 'did_rotate~attach names another DID');
    } catch (err) {
      if (err instanceof AttachmentError) throw new ProtocolViolation('response_not_accepted', `did_rotate~attach: ${err.message}`);
      throw err;
    }
    theirs = resolveTheirs(ctx, res.did, res['did_doc~attach'], [c.invitation_key]);
  } else {
    // DID Exchange 1.0 with an attached document: it must be signed by the invitation key.
    if (!res['did_doc~attach']) throw new ProtocolViolation('response_not_accepted', 'the response carries neither did_rotate~attach nor did_doc~attach');
    if (/^did:peer:[24]/.test(res.did)) verifyAttachment(res['did_doc~attach'], [c.invitation_key]);
    theirs = resolveTheirs(ctx, res.did, res['did_doc~attach'], [c.invitation_key]);
  }
  const peer = peerServiceOf(theirs);
  const version: DidExchangeVersion = c.connection_protocol === 'didexchange/1.0' ? '1.0' : '1.1';
  const next: StoredConnection = {
    ...c,
    state: 'active',
    rfc23_state: 'completed',
    their_did: theirs.did,
    peer: { endpoint: peer.endpoint, recipient_keys: peer.recipientKeys, routing_keys: peer.routingKeys },
    updated_at: ctx.now.toISOString(),
  };
  const complete = { '@type': didExchangeType(version, 'complete'), '@id': newMessageId(), '~thread': { thid: c.thid, ...(c.pthid ? { pthid: c.pthid } : {}) } };
  return {
    writes: [{ type: 'put', item: connectionItem(ctx.scope, next), condition: { equals: { state: 'request', updated_at: c.updated_at } } }, staged(ctx, 'connection.active', next)],
    outbound: [{ connectionId: c.connection_id, to: peer, senderVerkey: c.my_verkey, message: complete }],
  };
}

/** We invited and responded: their complete makes the connection active. */
export function onComplete(ctx: AgentContext, raw: unknown, c: StoredConnection): Decision {
  const parsed = DidExchangeComplete.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('complete_rejected', 'malformed DID Exchange complete');
  if (parsed.data['~thread'].thid !== c.thid) throw new ProtocolViolation('complete_rejected', 'the complete is not on this connection thread');
  if (c.state === 'active') return { writes: [], outbound: [] };
  if (c.their_role !== 'invitee' || c.state !== 'response') throw new ProtocolViolation('complete_rejected', `a complete on a connection in state ${c.state}`);
  return activate(ctx, c);
}

/** The connection becomes active (a complete, or the first other message the invitee sends after our response: RFC 0023). */
export function activate(ctx: AgentContext, c: StoredConnection): Decision & { connection: StoredConnection } {
  const next: StoredConnection = { ...c, state: 'active', rfc23_state: 'completed', updated_at: ctx.now.toISOString() };
  return { writes: [{ type: 'put', item: connectionItem(ctx.scope, next), condition: { equals: { state: c.state, updated_at: c.updated_at } } }, staged(ctx, 'connection.active', next)], outbound: [], connection: next };
}

/** A problem report on the exchange: the connection is abandoned. */
export function onProblemReport(ctx: AgentContext, raw: unknown, c: StoredConnection): Decision {
  const parsed = ProblemReport.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed problem report');
  if (threadOf(parsed.data) !== c.thid) throw new ProtocolViolation('malformed', 'the problem report is not on this connection thread');
  if (c.state === 'error') return { writes: [], outbound: [] };
  const p = parsed.data;
  const reason = (p.description?.en ?? p.explain ?? p['problem-code'] ?? p.description?.code ?? 'problem report').slice(0, 512);
  const next: StoredConnection = { ...c, state: 'error', rfc23_state: 'abandoned', error_msg: reason, updated_at: ctx.now.toISOString() };
  return { writes: [{ type: 'put', item: connectionItem(ctx.scope, next), condition: { equals: { updated_at: c.updated_at } } }, staged(ctx, 'connection.error', next)], outbound: [] };
}

/**
 * We accept another agent's invitation: a connection in state request, and the request to send to
 * the invitation's service (inline, or the service of the DID it names).
 */
export async function acceptInvitation(ctx: AgentContext, invitation: OutOfBandInvitation, opts: { label: string; alias: string | null }): Promise<Decision & { connection: StoredConnection }> {
  const protocol = invitation.handshake_protocols.find((p) => p === DIDEXCHANGE_1_1) ?? invitation.handshake_protocols.find((p) => p === DIDEXCHANGE_1_0);
  if (!protocol) throw new ProtocolViolation('invalid_invitation', 'the invitation offers neither DID Exchange 1.1 nor 1.0');
  const version: DidExchangeVersion = protocol === DIDEXCHANGE_1_1 ? '1.1' : '1.0';
  const service = invitation.services[0]!;
  const to = typeof service === 'string' ? peerServiceOf(resolveTheirs(ctx, service, undefined, null)) : inlineServiceOf(service);
  const mine = await newPairwiseDid(ctx);
  const id = newMessageId();
  const request = {
    '@type': didExchangeType(version, 'request'),
    '@id': id,
    '~thread': { thid: id, pthid: invitation['@id'] },
    label: opts.label,
    ...(invitation.goal_code ? { goal_code: invitation.goal_code } : {}),
    did: mine.did,
  };
  const at = ctx.now.toISOString();
  const connection: StoredConnection = {
    connection_id: ulid(ctx.now.getTime()),
    state: 'request',
    rfc23_state: 'request-sent',
    their_label: invitation.label ?? null,
    their_did: null,
    my_did: mine.did,
    their_role: 'inviter',
    invitation_key: to.recipientKeys[0]!,
    invitation_msg_id: invitation['@id'],
    invitation_mode: 'once',
    connection_protocol: version === '1.1' ? 'didexchange/1.1' : 'didexchange/1.0',
    alias: opts.alias,
    invitation_id: null,
    error_msg: null,
    created_at: at,
    updated_at: at,
    my_verkey: mine.verkey,
    peer: null,
    thid: id,
    pthid: invitation['@id'],
  };
  return {
    writes: [
      { type: 'put', item: connectionItem(ctx.scope, connection), condition: 'not_exists' },
      { type: 'put', item: { ...didcommKeys.recipientKey(ctx.scope, mine.verkey), type: 'didcomm_key', kind: 'connection', connection_id: connection.connection_id }, condition: 'not_exists' },
      staged(ctx, 'connection.request', connection),
    ],
    outbound: [{ connectionId: connection.connection_id, to, senderVerkey: mine.verkey, message: request }],
    connection,
  };
}
