// A holder-side `anoncreds/*` credential format for Credo 0.6.3's Issue Credential 2.0 protocol, its
// crypto delegated to the holder written from the AnonCreds specification (anoncreds-cl-holder.ts,
// anoncreds-revocation-holder.ts). Credo's own AnonCreds module needs anoncreds-rs' native library,
// which cannot load here; its protocol layer (offer → request → credential → ack, attachments,
// formats, threads) is independent of the format and is what this exercises against our issuer.
import { CredoError, JsonEncoder, type AgentContext } from '@credo-ts/core';
import {
  DidCommAttachment,
  DidCommAttachmentData,
  DidCommCredentialFormatSpec,
  type DidCommCredentialFormat,
  type DidCommCredentialFormatAcceptOfferOptions,
  type DidCommCredentialFormatCreateReturn,
  type DidCommCredentialFormatProcessCredentialOptions,
  type DidCommCredentialFormatProcessOptions,
  type DidCommCredentialFormatService,
} from '@credo-ts/didcomm';
import { holderCheckCredential, holderCredentialRequest, holderVerifyKeyCorrectness, type HolderPublicKey } from './anoncreds-cl-holder';
import { holderRevocationBlinding } from './anoncreds-revocation-holder';

const OFFER = 'anoncreds/credential-offer@v1.0';
const REQUEST = 'anoncreds/credential-request@v1.0';
const CREDENTIAL = 'anoncreds/credential@v1.0';
const METADATA_KEY = '_spec/anoncreds-request';

export interface SpecAnonCredsFormat extends DidCommCredentialFormat {
  formatKey: 'specAnoncreds';
  credentialRecordType: 'spec-anoncreds';
  credentialFormats: { createProposal: never; acceptProposal: never; createOffer: never; acceptOffer: Record<string, never>; createRequest: never; acceptRequest: never };
  formatData: { proposal: never; offer: unknown; request: unknown; credential: unknown };
}

/** What the holder kept of one credential it accepted. */
export interface HeldCredential {
  readonly threadId: string;
  readonly credential: Record<string, any>;
  readonly request: Record<string, any>;
  /** The holder's revocation blinding vr′ (hex), for a revocable credential. */
  readonly vrPrime: string | null;
}

type CredDef = { value: { primary: { n: string; s: string; rctxt: string; z: string; r: Record<string, string> }; revocation?: Record<string, string> } };

const toKey = (p: CredDef['value']['primary']): HolderPublicKey => ({ n: BigInt(p.n), s: BigInt(p.s), rctxt: BigInt(p.rctxt), z: BigInt(p.z), r: Object.fromEntries(Object.entries(p.r).map(([k, v]) => [k, BigInt(v)])) });
const attach = (data: unknown, id: string) => new DidCommAttachment({ id, mimeType: 'application/json', data: new DidCommAttachmentData({ base64: JsonEncoder.toBase64(data) }) });
const holderOnly = () => Promise.reject(new CredoError('this format service is a holder only'));

export class SpecAnonCredsHolderFormatService implements DidCommCredentialFormatService<SpecAnonCredsFormat> {
  readonly formatKey = 'specAnoncreds' as const;
  readonly credentialRecordType = 'spec-anoncreds' as const;
  readonly held: HeldCredential[] = [];

  constructor(
    private readonly opts: {
      /** Resolves a credential definition by its id (the test fetches it from the did:web AnonCreds URL). */
      readonly credentialDefinition: (id: string) => Promise<CredDef>;
      readonly linkSecret: bigint;
    },
  ) {}

  createProposal = holderOnly;
  processProposal = holderOnly;
  acceptProposal = holderOnly;
  createOffer = holderOnly;
  createRequest = holderOnly;
  processRequest = holderOnly;
  acceptRequest = holderOnly;

  async processOffer(_agentContext: AgentContext, { attachment }: DidCommCredentialFormatProcessOptions): Promise<void> {
    const offer = attachment.getDataAsJson<Record<string, unknown>>();
    if (typeof offer?.cred_def_id !== 'string' || typeof offer.nonce !== 'string' || typeof offer.key_correctness_proof !== 'object') throw new CredoError('not an AnonCreds credential offer');
  }

  /** § "Requesting a credential": checks the key correctness proof, then blinds the link secret (and, revocable, vr′) on the offer's nonce. */
  async acceptOffer(_agentContext: AgentContext, { credentialExchangeRecord, attachmentId, offerAttachment }: DidCommCredentialFormatAcceptOfferOptions<SpecAnonCredsFormat>): Promise<DidCommCredentialFormatCreateReturn> {
    const offer = offerAttachment.getDataAsJson<{ cred_def_id: string; nonce: string; key_correctness_proof: { c: string; xz_cap: string; xr_cap: [string, string][] } }>();
    const cd = await this.opts.credentialDefinition(offer.cred_def_id);
    const pk = toKey(cd.value.primary);
    const kcp = offer.key_correctness_proof;
    if (!holderVerifyKeyCorrectness(pk, { c: BigInt(kcp.c), xz_cap: BigInt(kcp.xz_cap), xr_cap: kcp.xr_cap.map(([k, v]) => [k, BigInt(v)]) })) throw new CredoError('the key correctness proof does not verify');
    const blinding = cd.value.revocation ? holderRevocationBlinding(cd.value.revocation) : null;
    const { request, secrets } = holderCredentialRequest(pk, offer, this.opts.linkSecret, blinding ? { ur: blinding.ur } : {});
    credentialExchangeRecord.metadata.set(METADATA_KEY, { vPrime: secrets.vPrime.toString(), vrPrime: blinding?.vrPrime ?? null });
    const format = new DidCommCredentialFormatSpec({ attachmentId, format: REQUEST });
    return { format, attachment: attach(request, format.attachmentId) };
  }

  /** § "Receiving a credential": the values, the primary signature and its correctness proof; a credential that fails is refused. */
  async processCredential(_agentContext: AgentContext, { credentialExchangeRecord, attachment, requestAttachment }: DidCommCredentialFormatProcessCredentialOptions): Promise<void> {
    const credential = attachment.getDataAsJson<Record<string, any>>();
    const request = requestAttachment.getDataAsJson<Record<string, any>>();
    const kept = credentialExchangeRecord.metadata.get(METADATA_KEY) as { vPrime: string; vrPrime: string | null } | null;
    if (!kept) throw new CredoError('no request of ours on this exchange');
    if (credential.cred_def_id !== request.cred_def_id) throw new CredoError('the credential is of another definition than requested');
    const cd = await this.opts.credentialDefinition(credential.cred_def_id);
    const failed = holderCheckCredential(toKey(cd.value.primary), credential as never, request as { nonce: string }, { linkSecret: this.opts.linkSecret, vPrime: BigInt(kept.vPrime) });
    if (failed) throw new CredoError(`the credential does not verify: ${failed}`);
    this.held.push({ threadId: credentialExchangeRecord.threadId, credential, request, vrPrime: kept.vrPrime });
    credentialExchangeRecord.credentials.push({ credentialRecordType: this.credentialRecordType, credentialRecordId: `spec-anoncreds-${this.held.length}` });
  }

  async shouldAutoRespondToProposal(): Promise<boolean> {
    return false;
  }
  async shouldAutoRespondToOffer(): Promise<boolean> {
    return true;
  }
  async shouldAutoRespondToRequest(): Promise<boolean> {
    return false;
  }
  async shouldAutoRespondToCredential(): Promise<boolean> {
    return true;
  }
  async deleteCredentialById(): Promise<void> {}

  supportsFormat(format: string): boolean {
    return [OFFER, REQUEST, CREDENTIAL].includes(format);
  }
}

/**
 * The did:web AnonCreds method, as a holder resolves an object id against the runtime at `apiUrl`:
 * the DID document's `#anoncreds` service, then its endpoint + relativeRef.
 */
export function didWebAnonCredsResolver(apiUrl: string): (id: string) => Promise<any> {
  return async (id) => {
    const did = id.slice(0, id.indexOf('?'));
    const relativeRef = new URLSearchParams(id.slice(id.indexOf('?'))).get('relativeRef')!;
    const docRes = await fetch(`${apiUrl}/dids/${did.split(':').pop()}/did.json`);
    if (docRes.status !== 200) throw new Error(`did document of ${did}: ${docRes.status}`);
    const doc = (await docRes.json()) as { service: { id: string; serviceEndpoint: string }[] };
    const service = doc.service.find((s) => s.id === `${did}#anoncreds`);
    if (!service) throw new Error(`${did} has no #anoncreds service`);
    const res = await fetch(`${service.serviceEndpoint}${relativeRef}`);
    if (res.status !== 200) throw new Error(`${id}: ${res.status}`);
    return ((await res.json()) as { resource: unknown }).resource;
  };
}
