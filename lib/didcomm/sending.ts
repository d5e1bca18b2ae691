import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { Item, ItemStore } from '../store/port';
import type { WalletRefs } from '../tenancy/public-refs';
import { ProtocolViolation } from './agent';
import type { AgentRuntime } from './agent-runtime';
import { OutboundTooLargeError } from './outbound';
import { MAX_INVITATION_BYTES, invitationFromUrl } from './protocols/out-of-band/messages';
import { connectionFromItem, connectionView, didcommEndpoint, didcommKeys, storedConnectionFromItem, walletLabel, type ConnectionRecord, type StoredConnection } from './records';

/**
 * The two admin routes that make the agent send: a basic message to a contact (contract 4.8,
 * `POST /api/v1/messages`), and accepting another agent's invitation
 * (`POST /api/v1/invitations/receive`). Each commits its records and the outbound job in one
 * transaction (AgentRuntime); the outbound worker sends.
 */
export interface SendMessageInput {
  readonly invitation_id?: number | undefined;
  readonly contact_id?: string | undefined;
  readonly message?: string | undefined;
}

export interface ReceiveInvitationInput {
  readonly invitation_url?: string | undefined;
  readonly invitation?: Record<string, unknown> | undefined;
  readonly alias?: string | undefined;
  readonly label?: string | undefined;
}

export interface SendingDeps {
  readonly store: ItemStore;
  readonly runtime: AgentRuntime;
  readonly refs: WalletRefs;
}

export class SendingService {
  constructor(private readonly deps: SendingDeps) {}

  private async endpoint(scope: TenantScope, baseUrl: string): Promise<string> {
    return didcommEndpoint(baseUrl, await this.deps.refs.of(scope));
  }

  /**
   * The contact, or the one connection the invitation produced. An invitation that produced more than
   * one (multi-use) is refused: a message meant for one holder must not go to whichever connected last.
   */
  private async target(scope: TenantScope, input: SendMessageInput): Promise<StoredConnection> {
    if (input.contact_id !== undefined) {
      const item = await this.deps.store.get(didcommKeys.connection(scope, input.contact_id), { consistent: true });
      if (!item) throw new NotFoundError('No such contact', 'contact_not_found');
      const c = storedConnectionFromItem(item);
      if (input.invitation_id !== undefined && c.invitation_id !== input.invitation_id) {
        throw new BadRequestError('contact_id and invitation_id name different connections; send one of them', 'target_mismatch');
      }
      return c;
    }
    const id = input.invitation_id!;
    const [invitation, links] = await Promise.all([
      this.deps.store.get(didcommKeys.invitation(scope, id)),
      this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: didcommKeys.invitationConnectionPrefix(id), limit: 2, consistent: true }),
    ]);
    if (!invitation) throw new NotFoundError('No such invitation', 'invitation_not_found');
    if (links.length === 0) throw new ConflictError('The invitation has produced no connection yet', 'no_connection');
    if (links.length > 1) throw new ConflictError('The invitation produced more than one connection (multi-use): send with contact_id', 'invitation_ambiguous');
    const item = await this.deps.store.get(didcommKeys.connection(scope, String(links[0]!.connection_id)), { consistent: true });
    if (!item) throw new ConflictError('The invitation has produced no connection yet', 'no_connection');
    return storedConnectionFromItem(item);
  }

  /** Contract 4.8: stored as queued with its outbound job; `success` names the message's id. */
  async sendMessage(scope: TenantScope, input: SendMessageInput, baseUrl: string): Promise<{ success: string }> {
    if (input.message === undefined || input.message === '') throw new BadRequestError('message is required: the text to send', 'message_required');
    if (input.contact_id === undefined && input.invitation_id === undefined) throw new BadRequestError('Name the recipient: contact_id (a connection id) or invitation_id', 'target_required');
    const c = await this.target(scope, input);
    if (c.state !== 'active' || !c.peer) throw new ConflictError(`The connection is ${c.state}, not active: messages go on active connections only`, 'connection_not_active');
    let sent;
    try {
      sent = await this.deps.runtime.sendMessage(scope, await this.endpoint(scope, baseUrl), c, input.message);
    } catch (err) {
      if (err instanceof OutboundTooLargeError) throw new BadRequestError('The message is too large to send', 'message_too_large');
      // The connection left active between the read and the write.
      if ((err as Error).name === 'ConditionFailedError') throw new ConflictError('The connection is no longer active', 'connection_not_active');
      throw err;
    }
    return { success: `Message ${sent.message.message_id} queued for contact ${c.connection_id}` };
  }

  /** Accepts an Out-of-Band invitation: the connection (state request) and its DID Exchange request's job. */
  async receiveInvitation(scope: TenantScope, input: ReceiveInvitationInput, baseUrl: string): Promise<ConnectionRecord & { contact_id: string }> {
    if ((input.invitation_url === undefined) === (input.invitation === undefined)) {
      throw new BadRequestError('Send exactly one of invitation_url and invitation', 'invitation_required');
    }
    const invitation = input.invitation ?? invitationOfUrl(input.invitation_url!);
    if (Buffer.byteLength(JSON.stringify(invitation), 'utf8') > MAX_INVITATION_BYTES) throw new BadRequestError(`The invitation is larger than ${MAX_INVITATION_BYTES} bytes`, 'invalid_invitation');
    const [endpoint, label] = await Promise.all([this.endpoint(scope, baseUrl), input.label ?? walletLabel(this.deps.store, scope)]);
    try {
      const { connection } = await this.deps.runtime.acceptInvitation(scope, endpoint, invitation, { label, alias: input.alias ?? null });
      return connectionView(connectionFromItem(connection as unknown as Item));
    } catch (err) {
      // The invitation, its service or the DID it names refused (invalid_invitation, invalid_did_doc).
      if (err instanceof ProtocolViolation) throw new BadRequestError(err.message, 'invalid_invitation');
      if (err instanceof OutboundTooLargeError) throw new BadRequestError('The invitation makes a request too large to send', 'invalid_invitation');
      throw err;
    }
  }
}

/**
 * The invitation an invitation URL carries inline. Only Out-of-Band (`oob=`): Connections 1.0
 * invitations (`c_i=`) and connectionless messages (`d_m=`) are protocols this agent does not speak,
 * and short URLs (`_oobid=`, or none) would need a fetch of a URL the caller chose, which we never make.
 */
export function invitationOfUrl(raw: string): Record<string, unknown> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequestError('invitation_url is not an absolute URL', 'invalid_invitation');
  }
  const p = url.searchParams;
  if (!p.has('oob')) {
    if (p.has('c_i')) throw new BadRequestError('Connections 1.0 invitations (c_i) are not supported: this agent speaks DID Exchange (Out-of-Band invitations, oob=)', 'unsupported_invitation');
    if (p.has('d_m')) throw new BadRequestError('Connectionless messages (d_m) are not supported: send an Out-of-Band invitation (oob=)', 'unsupported_invitation');
    throw new BadRequestError('The URL carries no inline invitation (oob=); short invitation URLs are not fetched: send the long URL or the invitation JSON', 'unsupported_invitation');
  }
  const invitation = invitationFromUrl(raw);
  if (invitation === null || typeof invitation !== 'object' || Array.isArray(invitation)) throw new BadRequestError('oob= is not base64url of an invitation JSON object', 'invalid_invitation');
  return invitation as Record<string, unknown>;
}
