import { randomUUID } from 'node:crypto';
import { ulid } from 'ulid';
import { signingIdentity } from '../dids/signing';
import { readDid } from '../dids/records';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { prefixPage } from '../http/paging';
import { outboundJobWrites, OutboundTooLargeError } from '../didcomm/outbound';
import { IssueRefused, type ExchangeToIssue, type Issued } from '../didcomm/protocols/issue-credential-v2/formats';
import { toHolder } from '../didcomm/protocols/issue-credential-v2/handlers';
import type { FormatIssuer } from '../didcomm/protocols/issue-credential-v2/issuing';
import { LD_PROOF, type LdProofDetail } from '../didcomm/protocols/issue-credential-v2/ld-proof';
import { offerMessage } from '../didcomm/protocols/issue-credential-v2/messages';
import { EXCHANGE_EVENTS, exchangeItem, exchangeKeys, exchangeView, storedExchangeFromItem, type ExchangeRecord, type StoredExchange } from '../didcomm/protocols/issue-credential-v2/records';
import type { InvitationService } from '../didcomm/protocols/out-of-band/invitations';
import { didcommKeys, storedConnectionFromItem, type StoredConnection } from '../didcomm/records';
import type { KeyManager } from '../keys/port';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore, WriteOp } from '../store/port';
import { CONTEXT_URLS } from './contexts';
import { MAX_TIMEOUT_SECONDS } from './issuance-contract';
import type { ContextLookup, JsonObject } from './loader';
import { offlineDocumentLoader } from './loader';
import { checkCredential, signCredential, signingKeyOf, type Cryptosuite, type ProofType } from './signing';
import { withCredentialStatus, type CredentialStatusSource, type JsonLdCredentialStatus } from './status';

/**
 * JSON-LD credentials issued over DIDComm (contract 4.2, `POST /api/v1/credentials/json-ld`): Issue
 * Credential 2.0 with the RFC 0593 `ld_proof` formats. The offer is checked as fully as the signature
 * will be (issuer DID of this wallet, the proof its key can make, the VC data model, safe mode over
 * every context, offline) before anything is stored or sent; the holder's request is checked against
 * it by the inbound worker and signed by the issuing worker (lib/didcomm/protocols/issue-credential-v2/).
 */

/** The largest credential we offer (compact JSON, UTF-8): it travels in the offer, the request and the credential, all in one record. */
export const MAX_CREDENTIAL_BYTES = 64 * 1024;
const POLL_MS = 500;
/** Exchanges per page of GET /api/v1/credentials when no limit is given. */
export const DEFAULT_EXCHANGE_PAGE = 100;

/**
 * The status-list side (lib/jsonld/status.ts): called once per exchange, before the offer is made,
 * because the status is part of the offered credential (RFC 0593 holders such as Credo refuse a
 * credential that differs from what they requested). Its writes (the entry and its event) go into the
 * transaction that records the offer, so an entry exists only for an exchange that exists.
 */
export type StatusSource = Pick<CredentialStatusSource, 'credentialStatusFor'>;

export interface IssueJsonLdInput {
  readonly credential?: Record<string, unknown> | null | undefined;
  readonly proofType?: ProofType | null | undefined;
  readonly cryptosuite?: Cryptosuite | null | undefined;
  readonly verification_method?: string | null | undefined;
  readonly contact_id?: string | null | undefined;
  readonly invitation_id?: number | null | undefined;
  readonly revocation_def_id?: string | null | undefined;
  readonly rule?: string | null | undefined;
  readonly comment?: string | null | undefined;
}

export interface JsonLdIssuanceDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly invitations: Pick<InvitationService, 'create'>;
  /** The wallet's own context files, as the loader reads them (lib/jsonld/context-files.ts lookupFor). */
  readonly contexts: (scope: TenantScope, baseUrl: string) => ContextLookup;
  readonly statusSource: StatusSource;
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
}

type Target = { kind: 'connection'; connection: StoredConnection } | { kind: 'pending'; invitationId: number } | { kind: 'invitation' };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class JsonLdIssuance {
  private readonly now: () => Date;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: JsonLdIssuanceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Contract 4.2: the offer made (and sent, queued or carried by a new invitation); `[exchange]`, after waiting up to `timeout` seconds. */
  async issue(scope: TenantScope, input: IssueJsonLdInput, timeoutSeconds: number, baseUrl: string): Promise<ExchangeRecord[]> {
    // Everything is checked before anything is stored or sent.
    if (input.rule !== undefined && input.rule !== null) {
      throw new BadRequestError('rule is not supported: the contract gives it no meaning, and ACA-Py has no such field on an ld_proof issuance; send the request without it', 'rule_not_supported');
    }
    if (!isObject(input.credential)) throw new BadRequestError('credential is required: the JSON-LD credential to offer', 'credential_required');
    if (Buffer.byteLength(JSON.stringify(input.credential), 'utf8') > MAX_CREDENTIAL_BYTES) throw new BadRequestError(`The credential is larger than ${MAX_CREDENTIAL_BYTES} bytes as JSON`, 'credential_too_large');
    const defId = input.revocation_def_id ?? undefined;
    if (input.contact_id != null && input.invitation_id != null) throw new BadRequestError('Send contact_id or invitation_id, not both', 'target_ambiguous');
    const issuer = input.credential.issuer;
    const issuerDid = isObject(issuer) ? issuer.id : issuer;
    if (typeof issuerDid !== 'string') throw new BadRequestError("The credential's issuer must be one of this wallet's DIDs (a string, or an object with id)", 'issuer_required');
    const { did } = await signingIdentity(this.deps.store, scope, { did: issuerDid }, { did: 'credential.issuer', verificationMethod: 'verification_method' });
    const key = signingKeyOf(did);
    const documentLoader = offlineDocumentLoader({ contexts: this.deps.contexts(scope, baseUrl) });
    const proof = { proofType: input.proofType ?? undefined, cryptosuite: input.cryptosuite ?? undefined, verificationMethod: input.verification_method ?? undefined };
    let { credential, plan } = await checkCredential({ key, credential: input.credential, proof, documentLoader, now: this.now() });
    const target = await this.target(scope, input);
    const exchangeId = ulid(this.now().getTime());
    let status: JsonLdCredentialStatus | undefined;
    if (defId !== undefined) {
      status = await this.deps.statusSource.credentialStatusFor(scope, defId, exchangeId);
      credential = withCredentialStatus(credential, status.credentialStatus);
      ({ credential } = await checkCredential({ key, credential, proof, documentLoader, now: this.now() }));
    }
    const proofType = plan.name.startsWith('DataIntegrityProof') ? 'DataIntegrityProof' : plan.name;
    const cryptosuite = proofType === 'DataIntegrityProof' ? plan.name.slice('DataIntegrityProof with '.length) : undefined;
    const detail: LdProofDetail = { credential, options: { proofType, proofPurpose: 'assertionMethod', ...(cryptosuite ? { cryptosuite } : {}) } };
    const threadId = randomUUID();
    const message = offerMessage({ id: threadId, format: LD_PROOF.offerFormat, attachId: LD_PROOF.name, data: detail, comment: input.comment });
    const at = this.now().toISOString();
    const base: StoredExchange = {
      credential_exchange_id: exchangeId,
      connection_id: null,
      invitation_id: null,
      invitation_url: null,
      thread_id: threadId,
      parent_thread_id: null,
      role: 'issuer',
      initiator: 'self',
      state: 'offer-sent',
      format: LD_PROOF.name,
      revocation_def_id: defId ?? null,
      error_msg: null,
      created_at: at,
      updated_at: at,
      offer: detail,
      request: null,
      credential: null,
      offer_message: null,
      format_options: { issuer_did: did.qualified, proof_type: proofType, ...(cryptosuite ? { cryptosuite } : {}), verification_method: plan.verificationMethod, base_url: baseUrl, ...(status ? { credential_status: status.record } : {}) },
      format_record: null,
    };
    const writesFor = (x: StoredExchange): WriteOp[] => [
      { type: 'put', item: exchangeItem(scope, x), condition: 'not_exists' },
      { type: 'put', item: { ...exchangeKeys.thread(scope, threadId), type: 'credential_thread', exchange_id: exchangeId }, condition: 'not_exists' },
      this.deps.events.stage(scope, EXCHANGE_EVENTS['offer-sent'], { ...exchangeView(x) }).op,
      ...(status?.ops ?? []),
    ];
    let made: StoredExchange;
    try {
      if (target.kind === 'connection') {
        const c = target.connection;
        made = { ...base, connection_id: c.connection_id, invitation_id: c.invitation_id };
        await this.deps.store.write([
          ...writesFor(made),
          { type: 'check', key: didcommKeys.connection(scope, c.connection_id), condition: { equals: { state: 'active' } } },
          ...outboundJobWrites(scope, [toHolder(c, message)], this.now()),
        ]);
      } else if (target.kind === 'pending') {
        made = { ...base, invitation_id: target.invitationId, offer_message: message };
        await this.deps.store.write([...writesFor(made), { type: 'put', item: { ...exchangeKeys.pending(scope, target.invitationId, exchangeId), type: 'credential_pending', exchange_id: exchangeId } }]);
      } else {
        // A new single-use invitation carrying the offer (RFC 0434 requests~attach): whoever accepts it
        // connects and answers the offer on that connection. The exchange is written with the invitation.
        let carried: StoredExchange = base;
        await this.deps.invitations.create(
          scope,
          {
            requests: [message],
            goal_code: 'issue-vc',
            goal: 'To issue a credential',
            also: (inv) => {
              carried = { ...base, invitation_id: inv.invitation_id, invitation_url: inv.invitation_url, parent_thread_id: inv.invitation_msg_id };
              return writesFor(carried);
            },
          },
          baseUrl,
        );
        made = carried;
      }
    } catch (err) {
      if (err instanceof OutboundTooLargeError) throw new BadRequestError('The offer is too large to send', 'credential_too_large');
      if ((err as Error).name === 'ConditionFailedError') throw new ConflictError('The connection is no longer active', 'connection_not_active');
      throw err;
    }
    return [exchangeView(await this.waitFor(scope, made, Math.min(MAX_TIMEOUT_SECONDS, Math.max(0, timeoutSeconds))))];
  }

  /** The connection to offer on: the contact, the one connection of the invitation, the invitation's next one, or a new invitation. */
  private async target(scope: TenantScope, input: IssueJsonLdInput): Promise<Target> {
    const { store } = this.deps;
    if (input.contact_id != null) {
      const item = await store.get(didcommKeys.connection(scope, input.contact_id), { consistent: true });
      if (!item) throw new NotFoundError('No such contact', 'contact_not_found');
      const c = storedConnectionFromItem(item);
      if (c.state !== 'active' || !c.peer) throw new ConflictError(`The connection is ${c.state}, not active: credentials are offered on active connections`, 'connection_not_active');
      return { kind: 'connection', connection: c };
    }
    if (input.invitation_id != null) {
      const id = input.invitation_id;
      const [invitation, links] = await Promise.all([
        store.get(didcommKeys.invitation(scope, id), { consistent: true }),
        store.query(keys.walletPartition(scope), { skBeginsWith: didcommKeys.invitationConnectionPrefix(id), limit: 2, consistent: true }),
      ]);
      if (!invitation) throw new NotFoundError('No such invitation', 'invitation_not_found');
      if (links.length > 1) throw new ConflictError('The invitation produced more than one connection (multi-use): offer with contact_id', 'invitation_ambiguous');
      if (links.length === 0) return { kind: 'pending', invitationId: id };
      const item = await store.get(didcommKeys.connection(scope, String(links[0]!.connection_id)), { consistent: true });
      const c = item ? storedConnectionFromItem(item) : null;
      if (c && c.state === 'active' && c.peer) return { kind: 'connection', connection: c };
      if (c && (c.state === 'request' || c.state === 'response')) return { kind: 'pending', invitationId: id };
      throw new ConflictError("The invitation's connection is not active: offer on another invitation or contact", 'connection_not_active');
    }
    return { kind: 'invitation' };
  }

  /** Reads the exchange until it has been issued (or ended) or the time is up. */
  private async waitFor(scope: TenantScope, x: StoredExchange, seconds: number): Promise<StoredExchange> {
    const deadline = Date.now() + seconds * 1000;
    let current = x;
    while (Date.now() < deadline && (current.state === 'offer-sent' || current.state === 'request-received')) {
      await this.sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
      const item = await this.deps.store.get(exchangeKeys.exchange(scope, x.credential_exchange_id), { consistent: true });
      if (item) current = storedExchangeFromItem(item);
    }
    return current;
  }
}

/** The credential with its status entry; a v1 credential also gets the status-list context that defines the entry's terms. */
/** The exchanges of a wallet (every format), oldest first; one page. */
export async function listExchanges(store: ItemStore, scope: TenantScope, page: { limit: number; cursor: string | undefined }): Promise<{ items: ExchangeRecord[]; next: string | null }> {
  const out = await prefixPage(store, keys.walletPartition(scope), exchangeKeys.exchangePrefix, page);
  return { items: out.items.map(exchangeView), next: out.next };
}

export async function readExchange(store: ItemStore, scope: TenantScope, id: string): Promise<StoredExchange> {
  const item = await store.get(exchangeKeys.exchange(scope, id));
  if (!item) throw new NotFoundError('No such credential exchange', 'credential_exchange_not_found');
  return storedExchangeFromItem(item);
}

/** `GET /api/v1/credentials/json-ld/{id}`: the credential issued in the exchange. */
export async function issuedCredential(store: ItemStore, scope: TenantScope, id: string): Promise<Record<string, unknown>> {
  const x = await readExchange(store, scope, id);
  if (x.format !== LD_PROOF.name) throw new NotFoundError('No JSON-LD credential exchange has this id', 'credential_exchange_not_found');
  if (!isObject(x.credential)) throw new ConflictError(`The credential is not issued yet: the exchange is ${x.state}`, 'credential_not_issued');
  return x.credential;
}

/** `GET /api/v1/credential-records/{id}`: the exchange and its format-specific record (ACA-Py's `{cred_ex_record, ld_proof}`). */
export async function credentialRecord(store: ItemStore, scope: TenantScope, id: string): Promise<Record<string, unknown>> {
  const x = await readExchange(store, scope, id);
  return {
    cred_ex_record: exchangeView(x),
    [x.format]: {
      cred_ex_id: x.credential_exchange_id,
      offer: x.offer ?? null,
      request: x.request,
      credential: x.credential,
      issuer_did: x.format_options.issuer_did ?? null,
      proof_type: x.format_options.proof_type ?? null,
      cryptosuite: x.format_options.cryptosuite ?? null,
      verification_method: x.format_options.verification_method ?? null,
      created_at: x.created_at,
      updated_at: x.updated_at,
    },
  };
}

/**
 * The issuing half of `ld_proof` (the issuing worker): signs the checked request's credential with the
 * issuer DID and the proof fixed at offer time, through the key manager (KMS deployed).
 */
export class LdProofIssuer implements FormatIssuer {
  readonly name = LD_PROOF.name;

  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      readonly keyManager: KeyManager;
      readonly contexts: (scope: TenantScope, baseUrl: string) => ContextLookup;
      readonly now?: () => Date;
    },
  ) {}

  async issue(scope: TenantScope, x: ExchangeToIssue): Promise<Issued> {
    const o = x.format_options as { issuer_did?: string; proof_type?: ProofType; cryptosuite?: Cryptosuite; verification_method?: string; base_url?: string };
    const request = x.request as LdProofDetail | null;
    if (!request || !isObject(request.credential) || !o.issuer_did || !o.base_url) throw new IssueRefused('issuance-abandoned', 'the exchange has no request to sign');
    let did;
    try {
      did = await readDid(this.deps.store, scope, o.issuer_did);
    } catch (err) {
      if (err instanceof NotFoundError) throw new IssueRefused('issuance-abandoned', 'the issuer DID is gone');
      throw err;
    }
    if (did.deactivated_at) throw new IssueRefused('issuance-abandoned', 'the issuer DID was deactivated');
    const signed = await signCredential({
      keyManager: this.deps.keyManager,
      scope,
      key: signingKeyOf(did),
      credential: request.credential,
      proof: { proofType: o.proof_type, cryptosuite: o.cryptosuite, verificationMethod: o.verification_method },
      documentLoader: offlineDocumentLoader({ contexts: this.deps.contexts(scope, o.base_url) }),
      ...(this.deps.now ? { now: this.deps.now() } : {}),
    });
    const proof = signed.proof as Record<string, unknown> | undefined;
    return { attachment: signed, record: { proof_type: proof?.type ?? null, verification_method: proof?.verificationMethod ?? null, proof_created: proof?.created ?? null } };
  }
}
