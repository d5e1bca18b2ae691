import { walletScope, type OperationImpls } from '../http/contract';
import { listOrPage } from '../http/paging';
import type { ConnectionService } from './connections';
import type { didcommContracts, didcommPublicContracts } from './contract';
import { InboundService, type InboundResult } from './inbound';
import type { PublicRefs } from '../tenancy/public-refs';
import { JsonReply } from '../http/contract';
import { inSession } from '../store/session';
import type { MessageService } from './messages';
import type { InvitationService } from './protocols/out-of-band/invitations';
import type { SendingService } from './sending';
import { connectionView } from './records';

export interface DidcommServices {
  readonly invitations: InvitationService;
  readonly connections: ConnectionService;
  readonly messages: MessageService;
  readonly sending: SendingService;
}

/** The `didcomm` group: the wallet is the caller's; another wallet's records are simply not found. */
export function didcommOperations(s: DidcommServices): OperationImpls<typeof didcommContracts> {
  return {
    createInvitation: ({ caller, body, baseUrl }) => s.invitations.create(walletScope(caller), body, baseUrl),
    listInvitations: ({ caller, query }) =>
      listOrPage(
        query,
        () => s.invitations.list(walletScope(caller)),
        (p) => s.invitations.listPage(walletScope(caller), p),
      ),
    getInvitation: ({ caller, params }) => s.invitations.get(walletScope(caller), Number(params.invitation_id)),
    deleteInvitation: async ({ caller, params }) => {
      await s.invitations.delete(walletScope(caller), Number(params.invitation_id));
      return {};
    },
    listConnections: async ({ caller, query }) => (await s.connections.list(walletScope(caller), query)).map(connectionView),
    getConnection: async ({ caller, params }) => connectionView(await s.connections.get(walletScope(caller), params.id)),
    listMessages: ({ caller, query }) =>
      listOrPage(
        query,
        () => s.messages.list(walletScope(caller)),
        (p) => s.messages.listPage(walletScope(caller), p),
      ),
    getMessage: ({ caller, params }) => s.messages.get(walletScope(caller), params.id),
    sendMessage: ({ caller, body, baseUrl }) => s.sending.sendMessage(walletScope(caller), body ?? {}, baseUrl),
    receiveInvitation: ({ caller, body, baseUrl }) => s.sending.receiveInvitation(walletScope(caller), body, baseUrl),
  };
}

/**
 * The public endpoint: the media type, then the path's reference (one that names no wallet is a 404
 * before any session), then the envelope stored and queued in that wallet's session. Answered 202
 * alike whether or not the envelope was for a key of the wallet (no oracle for which keys exist).
 */
export function didcommPublicOperations(inbound: InboundService, refs: PublicRefs, onAccepted: (r: InboundResult) => void = () => undefined): OperationImpls<typeof didcommPublicContracts> {
  return {
    postDidcommEnvelope: async ({ params, body, request }) => {
      InboundService.checkMediaType(request.headers['content-type'] ?? '');
      const scope = await refs.resolve(params.public_ref);
      const result = await (scope ? inSession(scope, () => inbound.accept(scope, body, request.url)) : inbound.accept(null, body, request.url));
      onAccepted(result);
      return new JsonReply(undefined, { status: 202 }) as never;
    },
  };
}
