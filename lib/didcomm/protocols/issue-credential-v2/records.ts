import { keys, type TenantScope } from '../../../store/keys';
import type { Item, ItemKey } from '../../../store/port';
import type { ServiceDecorator } from '../out-of-band/messages';

/**
 * Credential exchanges (issuer role), in the wallet's partition, with ACA-Py's field names
 * (V20CredExRecord) where the contract shows none. Ids are ULIDs: key order is creation order.
 */
export const exchangeKeys = {
  exchange: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `CREX#${id}` }),
  exchangePrefix: 'CREX#',
  /** The exchange a thread id belongs to (a holder's message names only the thread). */
  thread: (s: TenantScope, thid: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `CREXTHID#${thid}` }),
  /** An exchange waiting for a connection of one of our invitations (invitation_id, none yet). */
  pending: (s: TenantScope, invitationId: number, exchangeId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `CREXPEND#${String(invitationId).padStart(10, '0')}#${exchangeId}` }),
  pendingPrefix: (invitationId: number): string => `CREXPEND#${String(invitationId).padStart(10, '0')}#`,
} as const;

/** The longest `timeout` (seconds) an offer call waits for the holder: API Gateway ends a request at 29 s. */
export const MAX_TIMEOUT_SECONDS = 20;

export const EXCHANGE_STATES = ['offer-sent', 'request-received', 'credential-issued', 'done', 'abandoned', 'credential-revoked'] as const;
export type ExchangeState = (typeof EXCHANGE_STATES)[number];

/** What the API and the events show of an exchange. */
export interface ExchangeRecord {
  readonly credential_exchange_id: string;
  /** The connection it runs on; null while it waits for one (invitation_id), and always for a connectionless exchange. */
  readonly connection_id: string | null;
  /** Our invitation whose connection it goes to (invitation_id), or the connectionless invitation made for it when neither was given. */
  readonly invitation_id: number | null;
  readonly invitation_url: string | null;
  readonly thread_id: string;
  readonly parent_thread_id: string | null;
  readonly role: 'issuer';
  readonly initiator: 'self';
  readonly state: ExchangeState;
  /** The credential format (`ld_proof`). */
  readonly format: string;
  readonly revocation_def_id: string | null;
  readonly error_msg: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** As stored: the view, and what the protocol needs (never shown in lists). */
export interface StoredExchange extends ExchangeRecord {
  /** The offer's attachment (ld_proof: `{credential, options}`). */
  readonly offer: unknown;
  /** The holder's checked request, once received. */
  readonly request: unknown | null;
  /** The issued credential (the `credentials~attach` payload), once issued. */
  readonly credential: unknown | null;
  /** The offer message, kept until it is sent (an exchange waiting for a connection). */
  readonly offer_message: Record<string, unknown> | null;
  /** Format-specific settings fixed at offer time (ld_proof: issuer DID, proof choice). */
  readonly format_options: Record<string, unknown>;
  /** Format-specific record of the issuance (ld_proof: the proof's type, method, created). */
  readonly format_record: Record<string, unknown> | null;
  /** Set for a connectionless exchange (no contact_id, no invitation_id): where its messages go. */
  readonly connectionless: ConnectionlessDelivery | null;
}

/**
 * Connectionless delivery (RFC 0434 without handshake, RFC 0056 `~service`): our service (the
 * invitation's key and our endpoint), and the holder once its first valid request took the exchange.
 */
export interface ConnectionlessDelivery {
  readonly service: ServiceDecorator;
  /** `verkey`: the key the request was authcrypted from; every later message of the thread must come from it. */
  readonly holder: { readonly verkey: string; readonly endpoint: string; readonly recipient_keys: string[]; readonly routing_keys: string[] } | null;
}

const VIEW_FIELDS = [
  'credential_exchange_id',
  'connection_id',
  'invitation_id',
  'invitation_url',
  'thread_id',
  'parent_thread_id',
  'role',
  'initiator',
  'state',
  'format',
  'revocation_def_id',
  'error_msg',
  'created_at',
  'updated_at',
] as const;

export function exchangeView(item: Item | StoredExchange): ExchangeRecord {
  const i = item as unknown as Record<string, unknown>;
  return Object.fromEntries(VIEW_FIELDS.map((f) => [f, i[f] ?? null])) as unknown as ExchangeRecord;
}

export function storedExchangeFromItem(item: Item): StoredExchange {
  return {
    ...exchangeView(item),
    offer: item.offer,
    request: item.request ?? null,
    credential: item.credential ?? null,
    offer_message: (item.offer_message as Record<string, unknown> | undefined) ?? null,
    format_options: (item.format_options as Record<string, unknown> | undefined) ?? {},
    format_record: (item.format_record as Record<string, unknown> | undefined) ?? null,
    connectionless: (item.connectionless as ConnectionlessDelivery | undefined) ?? null,
  };
}

export function exchangeItem(s: TenantScope, x: StoredExchange): Item {
  return { ...exchangeKeys.exchange(s, x.credential_exchange_id), type: 'credential_exchange', ...x };
}

/** The event of each state (one per state change). */
export const EXCHANGE_EVENTS = {
  'offer-sent': 'credential.offer_sent',
  'request-received': 'credential.request_received',
  'credential-issued': 'credential.issued',
  done: 'credential.done',
  abandoned: 'credential.abandoned',
  'credential-revoked': 'credential.revoked',
} as const satisfies Record<ExchangeState, string>;
