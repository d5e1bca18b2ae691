import { OUTBOX_JOB_SK_PREFIX, OUTBOX_SK_PREFIX, SYSTEM_PARTITIONS, walletPartitionKey } from '../service/resources';
import type { ItemKey, WriteOp } from './port';

/**
 * Key builders. Every tenant item's partition key starts with `W#<wallet_id>`; the wallet comes from
 * a {@link TenantScope}, which only the router (from the authorizer's context) and the super-admin
 * use cases (for the wallet they administer) create.
 */
declare const scopeBrand: unique symbol;
export interface TenantScope {
  readonly walletId: string;
  readonly [scopeBrand]: true;
}

/** A wallet id as text: the one pattern the tenant scope and the request schemas use. */
export const WALLET_ID = /^[1-9][0-9]{0,15}$/;

export function tenantScope(walletId: string): TenantScope {
  if (!WALLET_ID.test(walletId)) throw new Error('invalid wallet id for tenant scope');
  return Object.freeze({ walletId }) as TenantScope;
}

export function isWalletId(value: string): boolean {
  return WALLET_ID.test(value);
}

const walletPk = (s: TenantScope) => walletPartitionKey(s.walletId);

/**
 * The wallet record's count of changes to what its credential issuer publishes (supported credentials
 * created or deleted), incremented in the change's own transaction: the issuer metadata is rebuilt
 * only when it differs from the count the kept document was built at.
 */
export const WALLET_ISSUER_VERSION = 'issuer_version';

/** The write that bumps {@link WALLET_ISSUER_VERSION}: part of the transaction that changes a supported credential. */
export function issuerVersionBump(s: TenantScope): WriteOp {
  return { type: 'update', key: keys.wallet(s), set: {}, add: { [WALLET_ISSUER_VERSION]: 1 }, condition: 'exists' };
}

export const keys = {
  wallet: (s: TenantScope): ItemKey => ({ PK: walletPk(s), SK: 'WALLET' }),
  apiKey: (s: TenantScope, keyId: string): ItemKey => ({ PK: walletPk(s), SK: `KEY#${keyId}` }),
  apiKeyName: (s: TenantScope, name: string): ItemKey => ({ PK: walletPk(s), SK: `KEYNAME#${name}` }),
  apiKeyPrefix: 'KEY#',
  /** Outbox item of an event; the table's stream relays it to the webhook queue. */
  event: (s: TenantScope, eventId: string): ItemKey => ({ PK: walletPk(s), SK: `${OUTBOX_SK_PREFIX}${eventId}` }),
  /** Outbox item of a webhook job the relay queues (a redelivery's first attempt). */
  outboxJob: (s: TenantScope, deliveryId: string, attempt: number): ItemKey => ({ PK: walletPk(s), SK: `${OUTBOX_JOB_SK_PREFIX}${deliveryId}#${attempt}` }),
  webhookSettings: (s: TenantScope): ItemKey => ({ PK: walletPk(s), SK: 'SETTINGS#WEBHOOK' }),
  /** Delivery ids are time-ordered, so a descending query lists the newest first. */
  webhookDelivery: (s: TenantScope, deliveryId: string): ItemKey => ({ PK: walletPk(s), SK: `DLV#${deliveryId}` }),
  webhookDeliveryPrefix: 'DLV#',
  did: (s: TenantScope, did: string): ItemKey => ({ PK: walletPk(s), SK: `DID#${comparableDid(did)}` }),
  didPrefix: 'DID#',
  /** The wallet's count of active DIDs (its quota), and its DID creations in one minute (rate). */
  didQuota: (s: TenantScope): ItemKey => ({ PK: walletPk(s), SK: 'QUOTA#DIDS' }),
  didCreations: (s: TenantScope, minute: number): ItemKey => ({ PK: walletPk(s), SK: `RATE#DIDS#${minute}` }),
  /** The wallet's current public DID, and its acceptance of the publication agreement (TAA). */
  publicDid: (s: TenantScope): ItemKey => ({ PK: walletPk(s), SK: 'PUBLICDID' }),
  taaAcceptance: (s: TenantScope): ItemKey => ({ PK: walletPk(s), SK: 'TAA#ACCEPTANCE' }),
  /** Sealed private key of the local key manager (never used with KMS). */
  localKey: (s: TenantScope, ref: string): ItemKey => ({ PK: walletPk(s), SK: `LKEY#${ref}` }),
  walletPartition: walletPk,
  /**
   * A counter of the wallet's jobs in flight on a shared worker (lib/fairness/in-flight.ts), in a
   * partition of its own so that busy counters never throttle the wallet's data.
   */
  inFlight: (s: TenantScope, slot: string): ItemKey => ({ PK: `${walletPk(s)}#INFLIGHT`, SK: slot }),
  // System items (not tenant data).
  walletName: (name: string): ItemKey => ({ PK: `${SYSTEM_PARTITIONS.walletNamePrefix}${name}`, SK: 'WNAME' }),
  /** The public reference's lookup item: reference → wallet id (lib/tenancy/public-refs.ts). */
  publicRef: (ref: string): ItemKey => ({ PK: `${SYSTEM_PARTITIONS.publicRefPrefix}${ref}`, SK: 'PUBREF' }),
  walletCounter: { PK: SYSTEM_PARTITIONS.walletCounter, SK: 'WALLET_ID' } as ItemKey,
  baseKey: { PK: SYSTEM_PARTITIONS.baseKey, SK: 'BASEKEY' } as ItemKey,
} as const;

/** Values of the sparse GSI1. */
export const gsi1 = {
  apiKeyByMac: (macHex: string) => ({ GSI1PK: `AK#${macHex}`, GSI1SK: 'AK' }),
  apiKeyPk: (macHex: string) => `AK#${macHex}`,
  walletList: (walletId: string) => ({ GSI1PK: 'SYS#WALLETS', GSI1SK: `W#${walletId.padStart(16, '0')}` }),
  walletListPk: 'SYS#WALLETS',
} as const;

/** The PublicDids index value of a published DID (lib/dids/records.ts `publicLookup` builds it). */
export const publishedDidIndex = (lookup: string) => ({ PDID: lookup });

/**
 * The form DIDs are keyed and compared in: did:web percent-decoded, because a port's `%3A` arrives
 * decoded when the DID came through a URL path (`/1.0/identifiers/{did}`, `/api/v1/dids/{did}`).
 */
export function comparableDid(did: string): string {
  if (!did.startsWith('did:web:')) return did;
  try {
    return decodeURIComponent(did);
  } catch {
    return did;
  }
}
