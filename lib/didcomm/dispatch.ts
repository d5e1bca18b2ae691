import { ProtocolViolation, type AgentContext, type Decision } from './agent';
import { onBasicMessage } from './protocols/basic-message/handlers';
import { BASIC_MESSAGE_TYPE } from './protocols/basic-message/messages';
import { activate, onComplete, onImplicitRequest, onProblemReport, onRequest, onResponse } from './protocols/did-exchange/handlers';
import { parseDidExchangeType } from './protocols/did-exchange/messages';
import { normaliseType } from './protocols/out-of-band/messages';
import { isIssueCredentialV2 } from './protocols/issue-credential-v2/messages';
import { onIssueCredentialMessage } from './protocols/issue-credential-v2/handlers';
import { onPing, TRUST_PING_RESPONSE_TYPE, TRUST_PING_TYPE } from './protocols/trust-ping/handlers';
import type { InvitationRecord, StoredConnection } from './records';

/**
 * What an envelope was addressed to: one of our invitations' keys (`exchangeId`: a connectionless
 * invitation's one credential exchange), our public DID's DIDComm key (`did`: the DID it serves), or
 * our key on a connection.
 */
export type Target =
  | { readonly kind: 'invitation'; readonly invitation: InvitationRecord; readonly exchangeId?: string | null }
  | { readonly kind: 'public-did'; readonly did: string; readonly verkey: string }
  | { readonly kind: 'connection'; readonly connection: StoredConnection };

export interface Unpacked {
  readonly message: Record<string, unknown>;
  /** Set for authcrypt: the verkey the envelope proves it came from. */
  readonly senderVerkey?: string | undefined;
  readonly recipientVerkey: string;
}

function merge(a: Decision, b: Decision): Decision {
  return { writes: [...a.writes, ...b.writes], outbound: [...a.outbound, ...b.outbound] };
}

/**
 * Dispatch by `@type`: the handler of the message's protocol decides. Everything but a DID Exchange
 * request or response must come authcrypted from the peer's own key on that connection, so knowing
 * one of our connection keys is not enough to talk on the connection.
 */
export async function decide(ctx: AgentContext, inbound: Unpacked, target: Target): Promise<Decision> {
  const type = typeof inbound.message['@type'] === 'string' ? normaliseType(inbound.message['@type']) : '';
  const exchange = parseDidExchangeType(type);
  if (target.kind === 'invitation') {
    if (target.exchangeId) {
      // A connectionless invitation offers no handshake: its key takes its exchange's messages only.
      if (!isIssueCredentialV2(type)) throw new ProtocolViolation('unexpected_message', `${type.slice(0, 100) || 'a message without @type'} sent to a connectionless invitation's key`);
      return onIssueCredentialMessage(ctx, type, inbound.message, { kind: 'connectionless', invitationId: target.invitation.invitation_id, exchangeId: target.exchangeId, senderVerkey: inbound.senderVerkey });
    }
    if (exchange?.name !== 'request') throw new ProtocolViolation('unexpected_message', `${type.slice(0, 100) || 'a message without @type'} sent to an invitation key`);
    return onRequest(ctx, inbound.message, exchange.version, target.invitation);
  }
  if (target.kind === 'public-did') {
    if (exchange?.name !== 'request') throw new ProtocolViolation('unexpected_message', `${type.slice(0, 100) || 'a message without @type'} sent to the public DID's key`);
    return onImplicitRequest(ctx, inbound.message, exchange.version, target);
  }
  const c = target.connection;
  if (exchange?.name === 'response') return onResponse(ctx, inbound.message, c);
  const fromPeer = inbound.senderVerkey !== undefined && c.peer !== null && c.peer.recipient_keys.includes(inbound.senderVerkey);
  if (!fromPeer) throw new ProtocolViolation('unauthenticated', 'not authcrypted by the peer of this connection');
  if (exchange?.name === 'complete') return onComplete(ctx, inbound.message, c);
  if (exchange?.name === 'problem_report') return onProblemReport(ctx, inbound.message, c);
  if (c.state === 'error') throw new ProtocolViolation('not_active', 'the connection was abandoned');
  // RFC 0023: after our response, any other message from the invitee also completes the exchange.
  const activation = c.state === 'response' && c.their_role === 'invitee' ? activate(ctx, c) : null;
  const current = activation?.connection ?? c;
  if (current.state !== 'active') throw new ProtocolViolation('not_active', `a ${type.slice(0, 100)} on a connection in state ${c.state}`);
  const before: Decision = activation ?? { writes: [], outbound: [] };
  switch (type) {
    case BASIC_MESSAGE_TYPE:
      return merge(before, onBasicMessage(ctx, inbound.message, current));
    case TRUST_PING_TYPE:
      return merge(before, onPing(ctx, inbound.message, current));
    case TRUST_PING_RESPONSE_TYPE:
      return before;
    default:
      if (isIssueCredentialV2(type)) return merge(before, await onIssueCredentialMessage(ctx, type, inbound.message, current));
      throw new ProtocolViolation('unsupported_message_type', `unsupported message type ${type.slice(0, 100) || '(none)'}`);
  }
}
