import { keys, type TenantScope } from '../store/keys';
import type { Item, ItemKey, ItemStore } from '../store/port';

/**
 * DIDComm records, all in the wallet's partition: invitations (a sequential `invitation_id` per
 * wallet, from a counter item), connections (ACA-Py's field names; `contact_id` is the connection id)
 * and basic messages. Connection and message ids are ULIDs, so key order is creation order.
 */
export const didcommKeys = {
  invitationCounter: (s: TenantScope): ItemKey => ({ PK: keys.walletPartition(s), SK: 'COUNTER#DCINV' }),
  /** Zero-padded so that key order is id order. */
  invitation: (s: TenantScope, id: number): ItemKey => ({ PK: keys.walletPartition(s), SK: `DCINV#${String(id).padStart(10, '0')}` }),
  invitationPrefix: 'DCINV#',
  connection: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `DCCONN#${id}` }),
  connectionPrefix: 'DCCONN#',
  message: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `DCMSG#${id}` }),
  messagePrefix: 'DCMSG#',
  /** A peer's message id seen on a connection: a replayed message fails its transaction on this item. */
  seen: (s: TenantScope, connectionId: string, messageId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `DCSEEN#${connectionId}#${messageId}` }),
  /** A connection one of our invitations produced (POST /api/v1/messages by invitation_id finds it here). */
  invitationConnection: (s: TenantScope, invitationId: number, connectionId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `DCINVCONN#${String(invitationId).padStart(10, '0')}#${connectionId}` }),
  invitationConnectionPrefix: (invitationId: number): string => `DCINVCONN#${String(invitationId).padStart(10, '0')}#`,
  /**
   * Which invitation or connection one of our verkeys belongs to (the inbound worker's first read):
   * `kind` invitation, connection, or public-did (the wallet's public DID's DIDComm key, lib/didcomm/public-did.ts).
   */
  recipientKey: (s: TenantScope, verkey: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `DCRCPT#${verkey}` }),
} as const;

/** The largest invitation id (ten digits keep the padded key order). */
export const MAX_INVITATION_ID = 9_999_999_999;

export const INVITATION_STATES = ['await-response', 'done'] as const;
export type InvitationState = (typeof INVITATION_STATES)[number];

export const CONNECTION_STATES = ['invitation', 'request', 'response', 'active', 'error'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

/** RFC 0023 (DID Exchange) states, as ACA-Py's `rfc23_state`. */
export const RFC23_STATES = ['invitation-sent', 'invitation-received', 'request-sent', 'request-received', 'response-sent', 'response-received', 'completed', 'abandoned'] as const;
export type Rfc23State = (typeof RFC23_STATES)[number];

export const MESSAGE_DIRECTIONS = ['sent', 'received'] as const;
export const MESSAGE_STATES = ['queued', 'sent', 'failed', 'received'] as const;
export type MessageState = (typeof MESSAGE_STATES)[number];

export interface InvitationRecord {
  readonly invitation_id: number;
  /** The invitation message's `@id`: peers name it as `pthid` in their DID Exchange request. */
  readonly invitation_msg_id: string;
  /** Our verkey in the invitation's inline service (base58 Ed25519). */
  readonly invitation_key: string;
  readonly invitation: Record<string, unknown>;
  readonly invitation_url: string;
  readonly label: string;
  readonly alias: string | null;
  readonly goal_code: string | null;
  readonly goal: string | null;
  readonly multi_use: boolean;
  readonly state: InvitationState;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface ConnectionRecord {
  readonly connection_id: string;
  readonly state: ConnectionState;
  readonly rfc23_state: Rfc23State;
  readonly their_label: string | null;
  readonly their_did: string | null;
  readonly my_did: string | null;
  /** The other side's role: `invitee` when we invited, `inviter` when we received their invitation. */
  readonly their_role: 'invitee' | 'inviter';
  readonly invitation_key: string | null;
  readonly invitation_msg_id: string | null;
  readonly invitation_mode: 'once' | 'multi';
  readonly connection_protocol: 'didexchange/1.1' | 'didexchange/1.0';
  readonly alias: string | null;
  /** Our invitation that produced it (null when we received theirs). */
  readonly invitation_id: number | null;
  readonly error_msg: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface MessageRecord {
  readonly message_id: string;
  readonly invitation_id: number | null;
  readonly contact_id: string;
  readonly message: string;
  readonly direction: (typeof MESSAGE_DIRECTIONS)[number];
  /** `sent_time` of the basic message (RFC 0095): the sender's clock. */
  readonly sent_time: string;
  readonly state: MessageState;
  readonly created_at: string;
  readonly updated_at: string;
}

/**
 * A connection as stored: the record the API shows, and what the agent needs to talk to the peer
 * (kept out of every view).
 */
export interface StoredConnection extends ConnectionRecord {
  /** Our verkey on this connection (the key of `my_did`): peers encrypt to it, we sign and authcrypt with it. */
  readonly my_verkey: string;
  /** Where the peer takes messages; null until its DID is known. */
  readonly peer: { readonly endpoint: string; readonly recipient_keys: readonly string[]; readonly routing_keys: readonly string[] } | null;
  /** The DID Exchange thread (the request's @id) and its parent (the invitation's @id). */
  readonly thid: string;
  readonly pthid: string | null;
}

export function storedConnectionFromItem(item: Item): StoredConnection {
  return {
    ...connectionFromItem(item),
    my_verkey: String(item.my_verkey),
    peer: (item.peer as StoredConnection['peer']) ?? null,
    thid: String(item.thid),
    pthid: typeof item.pthid === 'string' ? item.pthid : null,
  };
}

export function connectionItem(s: TenantScope, c: StoredConnection): Item {
  return { ...didcommKeys.connection(s, c.connection_id), type: 'didcomm_connection', ...c };
}

/** The view of a connection (events, API): never the internals. */
export function connectionData(c: StoredConnection): Record<string, unknown> {
  return { ...connectionView(connectionFromItem(c as unknown as Item)) };
}

const INVITATION_FIELDS = ['invitation_id', 'invitation_msg_id', 'invitation_key', 'invitation', 'invitation_url', 'label', 'alias', 'goal_code', 'goal', 'multi_use', 'state', 'created_at', 'updated_at'] as const;
const CONNECTION_FIELDS = [
  'connection_id',
  'state',
  'rfc23_state',
  'their_label',
  'their_did',
  'my_did',
  'their_role',
  'invitation_key',
  'invitation_msg_id',
  'invitation_mode',
  'connection_protocol',
  'alias',
  'invitation_id',
  'error_msg',
  'created_at',
  'updated_at',
] as const;
const MESSAGE_FIELDS = ['message_id', 'invitation_id', 'contact_id', 'message', 'direction', 'sent_time', 'state', 'created_at', 'updated_at'] as const;

function pick<T>(item: Item, fields: readonly string[]): T {
  return Object.fromEntries(fields.map((f) => [f, item[f] ?? null])) as T;
}

export const invitationFromItem = (item: Item): InvitationRecord => pick(item, INVITATION_FIELDS);
export const connectionFromItem = (item: Item): ConnectionRecord => pick(item, CONNECTION_FIELDS);
export const messageFromItem = (item: Item): MessageRecord => pick(item, MESSAGE_FIELDS);

/** Connection views carry `contact_id`, the contract's name for the connection id. */
export function connectionView(c: ConnectionRecord): ConnectionRecord & { contact_id: string } {
  return { ...c, contact_id: c.connection_id };
}

/** The public DIDComm endpoint of a wallet: the service endpoint in its invitations and DID documents. */
export function didcommEndpoint(baseUrl: string, publicRef: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/didcomm/${publicRef}`;
}

/** The label we give peers: the wallet's, or `Wallet <id>` when it has none. */
export async function walletLabel(store: ItemStore, scope: TenantScope): Promise<string> {
  const wallet = await store.get(keys.wallet(scope));
  return typeof wallet?.label === 'string' && wallet.label !== '' ? wallet.label : `Wallet ${scope.walletId}`;
}
