import { SYSTEM_PARTITIONS, TABLE, walletPartitionKey, type IndexName, type QueueId } from './resources';
import type { RouteGroup } from './routes';

/**
 * What each function may do to data, keys and queues: declared once here. The stack builds every
 * IAM role from it (infra/constructs/declared-access.ts) and the local runtime refuses whatever it does
 * not allow ({@link allows}, applied to every SDK call and key operation), so a missing permission
 * fails `npm test` instead of production.
 *
 * Two principals per function, and a third for tenancy:
 * - its own role (`shared`): service-level lookups only — named partitions, a lookup index, the MAC
 *   key, the queues. Used outside any wallet's session (authorizer, public routes, super-admin).
 * - a wallet's session (`tenant`): the function's tenant role assumed with the session tag
 *   `wallet_id`. Its data grants reach only partitions `W#<wallet>` and `W#<wallet>#…` (IAM
 *   `dynamodb:LeadingKeys`), its key grants only KMS keys tagged with that wallet.
 * - a wallet's registry session (`registry`, tenancy only): a role of its own, assumed with the same
 *   tag by the wallet-creation path alone, that writes the name reservation (`SYS#WNAME#<name>`) and
 *   the public-reference lookup (`SYS#PUBREF#<ref>`) together with the new wallet's record. No tenant
 *   role writes those prefixes: IAM cannot require the puts' `attribute_not_exists`, so any session
 *   that may put there could overwrite another wallet's reservation.
 *
 * The queue workers (webhook-delivery, email-worker, status-worker, didcomm-outbound) count their wallet's jobs in
 * flight in `W#<wallet>#INFLIGHT` (lib/fairness/in-flight.ts: UpdateItem, and GetItem to find
 * expired places), with their `tenant` grants on the wallet's own partitions.
 */
export type FunctionName = RouteGroup | 'authorizer' | 'bootstrap' | 'webhook-relay' | 'webhook-delivery' | 'status-worker' | 'email-worker' | 'didcomm-worker' | 'didcomm-outbound' | 'anoncreds-worker' | 'credential-issuer';

export const DATA_ACTIONS = ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'] as const;
export type DataAction = (typeof DATA_ACTIONS)[number];

export const ISSUER_KEY_ACTIONS = ['CreateKey', 'GetPublicKey', 'Sign', 'ScheduleKeyDeletion'] as const;
export type IssuerKeyAction = (typeof ISSUER_KEY_ACTIONS)[number];

/** A wallet's data keys (lib/didcomm/key-vault.ts): KMS envelope encryption under the stack's DIDComm key. */
export const DATA_KEY_ACTIONS = ['GenerateDataKey', 'Decrypt'] as const;
export type DataKeyAction = (typeof DATA_KEY_ACTIONS)[number];

/**
 * What a wallet's data key seals: one data key per wallet and purpose — `didcomm` its DIDComm
 * connection keys, `anoncreds` its credential definitions' and revocation registries' private keys —
 * so a function holding one cannot open the other.
 */
export const DATA_KEY_PURPOSES = ['didcomm', 'anoncreds'] as const;
export type DataKeyPurpose = (typeof DATA_KEY_PURPOSES)[number];

/** The encryption context's keys: one spelling for the adapters, the local KMS stand-in and guard, and the IAM conditions. */
export const DATA_KEY_CONTEXT = { wallet: 'wallet_id', purpose: 'purpose' } as const;

/** The encryption context of a wallet's data key for one purpose: `{wallet_id, purpose}`, nothing else. */
export function dataKeyContext(walletId: string, purpose: DataKeyPurpose): Record<string, string> {
  return { [DATA_KEY_CONTEXT.wallet]: walletId, [DATA_KEY_CONTEXT.purpose]: purpose };
}

/**
 * A grant on the base table for the partitions listed (exact values, or a prefix ending in `*`), or
 * on a whole index: an index holds only one kind of lookup, so the index itself is the boundary.
 */
export type DataGrant =
  | { readonly actions: readonly DataAction[]; readonly on: 'table'; readonly partitions: readonly string[] }
  | { readonly actions: readonly ['Query']; readonly on: IndexName };

export interface FunctionAccess {
  readonly shared?: {
    readonly data?: readonly DataGrant[];
    /** GenerateMac with the service's HMAC key (API-key MACs, subwallet tokens, webhook secrets). */
    readonly mac?: true;
    readonly sendTo?: readonly QueueId[];
    /** Add wallets' keys to the tenants' usage plan (API Gateway: create API key, add to plan). */
    readonly usageKeys?: true;
    /** Send mail through SES (SendRawEmail), from the configured sender only. */
    readonly mail?: true;
  };
  readonly tenant?: {
    /** Actions on the wallet's own partitions of the base table. */
    readonly data: readonly DataAction[];
    /** Further table grants of the wallet session (beyond its own partitions); each one justified. */
    readonly also?: readonly DataGrant[];
    readonly issuerKeys?: readonly IssuerKeyAction[];
    /**
     * The wallet's data keys, per purpose, only with the encryption context {wallet_id: the session's
     * wallet, purpose: that purpose}. A function may declare them beside `issuerKeys`: the issuer-key
     * Deny leaves the DIDComm key out.
     */
    readonly dataKeys?: DataKeyGrants;
  };
  readonly registry?: {
    /** Actions on the session's wallet's record partition `W#<wallet>` only (not `W#<wallet>#…`). */
    readonly record: readonly DataAction[];
    /** The reservation items it writes; nothing else. */
    readonly reservations: readonly DataGrant[];
  };
}

/** Data-key actions per purpose; a purpose left out is refused. */
export type DataKeyGrants = { readonly [P in DataKeyPurpose]?: readonly DataKeyAction[] };

/** The data-key actions a function declares for any purpose, each once. */
export function dataKeyActions(access: FunctionAccess): DataKeyAction[] {
  return [...new Set(DATA_KEY_PURPOSES.flatMap((p) => access.tenant?.dataKeys?.[p] ?? []))];
}

/** Whether a function declares any data-key action (it then needs the stack's DIDComm key). */
export function declaresDataKeys(access: FunctionAccess): boolean {
  return dataKeyActions(access).length > 0;
}

const OWN_DATA_ALL: readonly DataAction[] = DATA_ACTIONS;

/** Public reference → wallet id lookups (lib/tenancy/public-refs.ts): all a public function's own role reads of the table. */
const PUBLIC_REF_ITEMS = `${SYSTEM_PARTITIONS.publicRefPrefix}*`;
const READ_PUBLIC_REFS: DataGrant = { actions: ['GetItem'], on: 'table', partitions: [PUBLIC_REF_ITEMS] };
/** Wallet-name reservations and public-reference lookups: written only by tenancy's registry session. */
const RESERVATION_PARTITIONS = [`${SYSTEM_PARTITIONS.walletNamePrefix}*`, PUBLIC_REF_ITEMS] as const;

export const FUNCTION_ACCESS: Readonly<Record<FunctionName, FunctionAccess>> = {
  authorizer: { shared: { data: [{ actions: ['Query'], on: TABLE.gsi1.name }], mac: true } },
  bootstrap: { shared: { data: [{ actions: ['PutItem'], on: 'table', partitions: [SYSTEM_PARTITIONS.baseKey] }], mac: true } },
  tenancy: {
    shared: {
      data: [
        { actions: ['UpdateItem'], on: 'table', partitions: [SYSTEM_PARTITIONS.walletCounter] },
        // A taken name is refused before a wallet id and a usage-plan key are spent on it.
        { actions: ['GetItem'], on: 'table', partitions: [`${SYSTEM_PARTITIONS.walletNamePrefix}*`] },
        { actions: ['Query'], on: TABLE.gsi1.name },
      ],
      mac: true,
      usageKeys: true,
    },
    tenant: { data: OWN_DATA_ALL },
    // Wallet creation (createSubwallet, super-admin) only: the name reservation, the reference lookup
    // (each holding only {wallet_id}) and the new wallet's record, in one transaction. No route renames
    // or removes a wallet, so nothing here deletes or updates them.
    registry: { record: ['PutItem'], reservations: [{ actions: ['PutItem'], on: 'table', partitions: RESERVATION_PARTITIONS }] },
  },
  webhooks: { shared: { mac: true }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'Query'] } },
  // DIDs on KMS issuer keys; set-public-did also publishes the wallet's DIDComm service, whose key (made on first use) is sealed under the wallet's DIDComm data key.
  dids: {
    tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'ConditionCheckItem'], issuerKeys: ['CreateKey', 'GetPublicKey', 'ScheduleKeyDeletion'], dataKeys: { didcomm: ['GenerateDataKey', 'Decrypt'] } },
  },
  taa: { tenant: { data: ['GetItem', 'PutItem'] } },
  oid4vci: { tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query'] } },
  resolver: { shared: { data: [{ actions: ['Query'], on: TABLE.publicDids.name }] } },
  // Public OID4VCI endpoints: the wallet comes from the path's public reference; its issuer secrets are MAC-derived, its credentials signed in KMS.
  // Its own role reads only public-reference lookups: a reference that names no wallet gets no session.
  // Issuance also assigns status-list entries: the definition counters (UpdateItem) and a check that each definition still exists.
  'oid4vci-issuer': { shared: { mac: true, data: [READ_PUBLIC_REFS] }, tenant: { data: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'], issuerKeys: ['Sign'] } },
  // Bulk email: checks the request against the wallet's supported credentials, records failures, queues one job per recipient.
  email: { shared: { sendTo: ['email'] }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'Query'] } },
  // Status lists (admin): definitions, entries and their shards, and PUT publish, which signs.
  'status-lists': { tenant: { data: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'], issuerKeys: ['Sign'] } },
  // Published lists: read, and signed on the first fetch or when half their validity is gone. A reference that names no wallet gets no session.
  'status-lists-public': { shared: { data: [READ_PUBLIC_REFS] }, tenant: { data: ['GetItem', 'BatchGetItem', 'PutItem', 'ConditionCheckItem'], issuerKeys: ['Sign'] } },
  // Definitions, requests and presentations of the wallet, and its trusted-issuers setting: records and events only (nothing is signed when a request is made).
  oid4vp: { tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query'] } },
  // Public verifier: request objects signed with the verifier DID's key; responses verified (issuer DIDs this
  // service publishes are read through the PublicDids index, others fetched over HTTPS; the wallet's trusted-issuers
  // setting and its own DID records read to decide trust). A reference that names no wallet gets no session.
  'oid4vp-verifier': {
    shared: { data: [READ_PUBLIC_REFS, { actions: ['Query'], on: TABLE.publicDids.name }] },
    tenant: { data: ['GetItem', 'PutItem', 'UpdateItem'], issuerKeys: ['Sign'] },
  },
  // DIDComm admin: invitations (a counter, the invitation, its key's lookup item and the event in one transaction), connections and messages.
  // Sending a message checks (ConditionCheckItem) that its connection is still active in the transaction that stores it with its outbound job.
  didcomm: { tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'], dataKeys: { didcomm: ['GenerateDataKey', 'Decrypt'] } } },
  // Public DIDComm endpoint: the path's reference, then in that wallet's session the recipient lookups (one BatchGet) and the stored envelope; the job goes on the inbound FIFO queue.
  'didcomm-inbound': { shared: { data: [READ_PUBLIC_REFS], sendTo: ['didcomm-inbound'] }, tenant: { data: ['BatchGetItem', 'PutItem'] } },
  // Inbound worker: the stored envelope, the records it names, the decision's transaction (records, events), the wallet's in-flight counter; keys unsealed (and, for a new connection, made) with the wallet's DIDComm data key.
  'didcomm-worker': { tenant: { data: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'], dataKeys: { didcomm: ['GenerateDataKey', 'Decrypt'] } } },
  // Context files: the wallet's reference (its record), the file's item, its list entry and the quota counter in one transaction; imported contexts read back from the wallet's own files.
  // JSON-LD credential offers (contract 4.2): the issuer DID and its connection or invitation read, the exchange, its thread lookup, its event and
  // the offer's outbox job in one transaction that checks the connection is still active; an offer in a new invitation makes that invitation's DIDComm key.
  // Exchanges listed (Query) and read. Nothing is signed here (no issuer-key grant): the issuing worker signs.
  jsonld: { tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'ConditionCheckItem'], dataKeys: { didcomm: ['GenerateDataKey', 'Decrypt'] } } },
  // Public context files: the id's (or query's) reference, then in that wallet's session one file or its list entries.
  'jsonld-public': { shared: { data: [READ_PUBLIC_REFS] }, tenant: { data: ['GetItem', 'Query'] } },
  // AnonCreds registry (admin): the public DID (pointer and record), schemas and definitions with their uniqueness items and quota counters, and the definition's job (an outbox item) in one transaction.
  // Offers (POST /api/v1/credentials), as JSON-LD offers: the exchange with its delivery in one transaction that checks the connection is still active
  // (ConditionCheckItem); an offer in a new invitation makes that invitation's DIDComm key (the DIDComm data key). Revoking (contract 4.2): the registry's
  // sealed γ opened (the AnonCreds data key, Decrypt only: the definition's creation made it), then registry, status list version, exchange, event and the notification's outbox job in one transaction.
  anoncreds: { tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'ConditionCheckItem'], dataKeys: { didcomm: ['GenerateDataKey', 'Decrypt'], anoncreds: ['Decrypt'] } } },
  // Public AnonCreds objects: the path's did:web DID through the PublicDids index (as the resolver finds it), then one item (status lists and tails: a bounded query) in its wallet's session.
  'anoncreds-public': { shared: { data: [{ actions: ['Query'], on: TABLE.publicDids.name }] }, tenant: { data: ['GetItem', 'Query'] } },
  meta: {},
  // Also queues the DIDComm outbound jobs (JOBQ#DCOUT#…) a decision wrote with its records.
  'webhook-relay': { shared: { sendTo: ['webhook', 'status', 'didcomm-outbound', 'anoncreds', 'credential-issue'] }, tenant: { data: ['GetItem', 'PutItem'] } },
  'webhook-delivery': { shared: { mac: true, sendTo: ['webhook'] }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem'] } },
  // One offer and one mail per recipient: the exchange as POST /api/v1/oid4vci/issue makes it, the recipient's record and events.
  // Recipients of a wallet at its cap go back on the email queue, delayed (lib/fairness/share.ts).
  'email-worker': { shared: { mail: true, sendTo: ['email'] }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'] } },
  // DIDComm outbound: packs each queued message with the connection's key (unsealed: the DIDComm data key, Decrypt only) and posts it;
  // marks our basic message sent or failed with its event; retries and over-cap jobs go back on its own queue.
  'didcomm-outbound': { shared: { sendTo: ['didcomm-outbound'] }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem'], dataKeys: { didcomm: ['Decrypt'] } } },
  // Credential definitions' keys: the record and its schema, then the record, the public object, the sealed private key (the wallet's AnonCreds data key: made on first use; no DIDComm key) and the event in one
  // transaction; a failure frees the tag (DeleteItem) and the quota place. Jobs of a wallet at its cap go back on its own queue, delayed.
  'anoncreds-worker': { shared: { sendTo: ['anoncreds'] }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'], dataKeys: { anoncreds: ['GenerateDataKey', 'Decrypt'] } } },
  // Re-publishes changed lists (reads shards, signs, stores) and removes deleted definitions' items (queueing the rest of a large removal).
  // Issuing worker: the exchange, its connection, the issuer DID and the wallet's context files read; the credential signed with the
  // wallet's issuer key (Sign only); the exchange, its event and the issue-credential message's outbox job written together; deferrals re-queued.
  // AnonCreds: the definition's sealed private key (and a revocable one's registry γ) opened with the wallet's AnonCreds data key, which the definition's
  // creation made (Decrypt only; no DIDComm key: the outbound worker packs the message); a revocation index allocated with its claim item in one transaction (the counter's step and the claim).
  'credential-issuer': { shared: { sendTo: ['credential-issue'] }, tenant: { data: ['GetItem', 'PutItem', 'UpdateItem'], issuerKeys: ['Sign'], dataKeys: { anoncreds: ['Decrypt'] } } },
  'status-worker': { shared: { sendTo: ['status'] }, tenant: { data: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'], issuerKeys: ['Sign'] } },
};

/**
 * The tags that tie a role session and an issuer key to a wallet: the adapters set them (STS session
 * tags, KMS CreateKey tags) and the stack's IAM conditions read them — one spelling for both sides.
 */
export const ACCESS_TAGS = { wallet: 'wallet_id', service: 'service' } as const;

export const FUNCTION_NAMES = Object.keys(FUNCTION_ACCESS) as FunctionName[];

/** The wallet partitions a session of `walletId` reaches (what the tenant role's LeadingKeys allow). */
export function walletPartitionPatterns(walletId: string): [string, string] {
  return [walletPartitionKey(walletId), `${walletPartitionKey(walletId)}#*`];
}

const compiled = new Map<string, RegExp>();

/** IAM StringLike semantics for the patterns used here: `*` matches any run of characters. */
export function likeMatches(pattern: string, value: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    if (compiled.size < 10_000) compiled.set(pattern, re);
  }
  return re.test(value);
}

/**
 * Who makes a call: a function's own role (`wallet` null), its session for one wallet, or (`registry`)
 * its registry session for one wallet.
 */
export interface Principal {
  readonly fn: FunctionName;
  readonly wallet: string | null;
  readonly registry?: true;
}

export type AccessRequest =
  | { readonly service: 'dynamodb'; readonly action: DataAction; readonly on: 'table' | IndexName; readonly partition: string }
  | { readonly service: 'kms-mac' }
  | { readonly service: 'kms'; readonly action: IssuerKeyAction; /** The wallet the key is (or is being) tagged with. */ readonly keyWallet: string }
  | {
      readonly service: 'kms-data-key';
      readonly action: DataKeyAction;
      /** The `wallet_id` of the request's encryption context. */
      readonly contextWallet: string;
      /** The `purpose` of the request's encryption context. */
      readonly purpose: DataKeyPurpose;
    }
  | { readonly service: 'sqs'; readonly queue: QueueId }
  | { readonly service: 'usage-keys' }
  | { readonly service: 'ses' };

function grantAllows(grant: DataGrant, r: Extract<AccessRequest, { service: 'dynamodb' }>): boolean {
  if (!(grant.actions as readonly string[]).includes(r.action) || grant.on !== r.on) return false;
  return grant.on !== 'table' || grant.partitions.some((p) => likeMatches(p, r.partition));
}

/** Whether the declaration lets `p` make request `r`: what IAM decides in AWS, decided here locally. */
export function allows(p: Principal, r: AccessRequest): boolean {
  const access = FUNCTION_ACCESS[p.fn];
  if (p.wallet === null) {
    const shared = access.shared ?? {};
    switch (r.service) {
      case 'dynamodb':
        return (shared.data ?? []).some((g) => grantAllows(g, r));
      case 'kms-mac':
        return shared.mac === true;
      case 'sqs':
        return (shared.sendTo ?? []).includes(r.queue);
      case 'usage-keys':
        return shared.usageKeys === true;
      case 'ses':
        return shared.mail === true;
      case 'kms':
      case 'kms-data-key':
        return false; // issuer keys and data keys only ever through a wallet's session
    }
  }
  if (p.registry) {
    const registry = access.registry;
    if (!registry || r.service !== 'dynamodb') return false;
    const record = r.on === 'table' && registry.record.includes(r.action) && r.partition === walletPartitionKey(p.wallet);
    return record || registry.reservations.some((g) => grantAllows(g, r));
  }
  const tenant = access.tenant;
  if (!tenant) return false;
  switch (r.service) {
    case 'dynamodb': {
      const own = r.on === 'table' && tenant.data.includes(r.action) && walletPartitionPatterns(p.wallet).some((pat) => likeMatches(pat, r.partition));
      return own || (tenant.also ?? []).some((g) => grantAllows(g, r));
    }
    case 'kms':
      return (tenant.issuerKeys ?? []).includes(r.action) && r.keyWallet === p.wallet;
    case 'kms-data-key':
      return (DATA_KEY_PURPOSES as readonly string[]).includes(r.purpose) && (tenant.dataKeys?.[r.purpose] ?? []).includes(r.action) && r.contextWallet === p.wallet;
    case 'kms-mac':
    case 'sqs':
    case 'usage-keys':
    case 'ses':
      return false; // service-level resources are used with the function's own role
  }
}

/** What AWS answers when IAM refuses a call; the local runtime throws the same. */
export class AccessDeniedError extends Error {
  readonly $fault = 'client';
  readonly $metadata = { httpStatusCode: 400 };
  constructor(p: Principal, r: AccessRequest | string) {
    const who = p.wallet === null ? `${p.fn} (own role)` : `${p.fn} (${p.registry ? 'registry session' : 'session'} of wallet ${p.wallet})`;
    const what = typeof r === 'string' ? r : r.service === 'dynamodb' ? `dynamodb:${r.action} on ${r.on} partition ${r.partition}` : r.service === 'kms' ? `kms:${r.action} on a key of wallet ${r.keyWallet}` : r.service === 'kms-data-key' ? `kms:${r.action} of the ${r.purpose} data key of wallet ${r.contextWallet}` : r.service === 'sqs' ? `sqs:SendMessage to ${r.queue}` : r.service === 'usage-keys' ? 'apigateway:POST on usage keys' : r.service === 'ses' ? 'ses:SendRawEmail' : 'kms:GenerateMac';
    super(`${who} is not authorized to perform ${what}: not declared in lib/service/access.ts`);
    this.name = 'AccessDeniedException';
  }
}
