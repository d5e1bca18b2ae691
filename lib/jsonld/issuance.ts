import { ulid } from '../ids';
import { signingIdentity } from '../dids/signing';
import { readDid } from '../dids/records';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { IssueRefused, type ExchangeToIssue, type Issued } from '../didcomm/protocols/issue-credential-v2/formats';
import type { FormatIssuer } from '../didcomm/protocols/issue-credential-v2/issuing';
import { LD_PROOF, type LdProofDetail } from '../didcomm/protocols/issue-credential-v2/ld-proof';
import { CredentialOffering, readExchange, type CredentialOfferingDeps } from '../didcomm/protocols/issue-credential-v2/offering';
import type { ExchangeRecord, StoredExchange } from '../didcomm/protocols/issue-credential-v2/records';
import type { KeyManager } from '../keys/port';
import type { TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import type { ContextLookup } from './loader';
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

export interface JsonLdIssuanceDeps extends CredentialOfferingDeps {
  /** The wallet's own context files, as the loader reads them (lib/jsonld/context-files.ts lookupFor). */
  readonly contexts: (scope: TenantScope, baseUrl: string) => ContextLookup;
  readonly statusSource: StatusSource;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class JsonLdIssuance {
  private readonly now: () => Date;
  private readonly offering: CredentialOffering;

  constructor(private readonly deps: JsonLdIssuanceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.offering = new CredentialOffering(deps);
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
    const target = await this.offering.target(scope, input);
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
    const made = await this.offering.offer(
      scope,
      target,
      {
        format: LD_PROOF,
        exchangeId,
        detail,
        formatOptions: { issuer_did: did.qualified, proof_type: proofType, ...(cryptosuite ? { cryptosuite } : {}), verification_method: plan.verificationMethod, base_url: baseUrl, ...(status ? { credential_status: status.record } : {}) },
        revocationDefId: defId ?? null,
        ops: status?.ops ?? [],
        comment: input.comment,
      },
      timeoutSeconds,
      baseUrl,
    );
    return [made];
  }
}

/** `GET /api/v1/credentials/json-ld/{id}`: the credential issued in the exchange. */
export async function issuedCredential(store: ItemStore, scope: TenantScope, id: string): Promise<Record<string, unknown>> {
  const x = await readExchange(store, scope, id);
  if (x.format !== LD_PROOF.name) throw new NotFoundError('No JSON-LD credential exchange has this id', 'credential_exchange_not_found');
  if (!isObject(x.credential)) throw new ConflictError(`The credential is not issued yet: the exchange is ${x.state}`, 'credential_not_issued');
  return x.credential;
}

/** The `ld_proof` record of `GET /api/v1/credential-records/{id}`. */
export function ldProofRecordView(x: StoredExchange): Record<string, unknown> {
  return {
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
