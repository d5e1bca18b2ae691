import type { CredentialFormat, RequestCheck } from './formats';

/**
 * RFC 0593 (`ld_proof`): the offer and the request carry a credential detail `{credential, options}`,
 * the credential is a signed JSON-LD credential. The protocol half only: no JSON-LD processing here
 * (the inbound worker runs it); the issuing half is lib/jsonld/ld-proof-issuer.ts.
 */
export const LD_PROOF_DETAIL_FORMAT = 'aries/ld-proof-vc-detail@v1.0';
export const LD_PROOF_VC_FORMAT = 'aries/ld-proof-vc@v1.0';

export interface LdProofDetail {
  readonly credential: Record<string, unknown>;
  readonly options: { readonly proofType: string; readonly proofPurpose?: string; readonly [k: string]: unknown };
}

/** JSON with object keys sorted at every level: equal texts are equal JSON, whatever the key order (or the realm the objects came from). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
const isDeepStrictEqual = (a: unknown, b: unknown) => canonical(a) === canonical(b);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A DID the holder names itself by: `did:<method>:<id>`, bounded. */
const HOLDER_DID = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]{1,500}$/;

/**
 * The request must repeat the offer exactly (JSON equality; key order aside), with one exception
 * RFC 0593 allows: when the offered credentialSubject has no `id`, the holder may set it to a DID of
 * its own (it is the holder binding). Everything else — another subject, claims, types, dates, issuer,
 * proof type or purpose, a status the holder asks for — is refused.
 */
export function checkLdProofRequest(offer: unknown, request: unknown): RequestCheck {
  if (!isObject(request) || !isObject(request.credential) || !isObject(request.options)) return { ok: false, problem: 'the request is not an ld-proof-vc-detail ({credential, options})' };
  if (!isObject(offer) || !isObject(offer.credential)) return { ok: false, problem: 'no offer on this exchange' };
  if (!isDeepStrictEqual(request.options, offer.options)) return { ok: false, problem: 'the request options differ from the offer (proof type, purpose and the rest are the issuer’s)' };
  const offered = offer.credential;
  const asked = request.credential;
  const subjectOffered = offered.credentialSubject;
  const subjectAsked = asked.credentialSubject;
  if (isObject(subjectOffered) && subjectOffered.id === undefined && isObject(subjectAsked) && subjectAsked.id !== undefined) {
    if (typeof subjectAsked.id !== 'string' || !HOLDER_DID.test(subjectAsked.id)) return { ok: false, problem: 'credentialSubject.id, when the holder sets it, must be a DID' };
    const { id: _id, ...rest } = subjectAsked;
    if (!isDeepStrictEqual({ ...asked, credentialSubject: rest }, offered)) return { ok: false, problem: 'the requested credential differs from the offered one' };
    return { ok: true, detail: request };
  }
  if (!isDeepStrictEqual(asked, offered)) return { ok: false, problem: 'the requested credential differs from the offered one' };
  return { ok: true, detail: request };
}

export const LD_PROOF: CredentialFormat = {
  name: 'ld_proof',
  offerFormat: LD_PROOF_DETAIL_FORMAT,
  requestFormat: LD_PROOF_DETAIL_FORMAT,
  issueFormat: LD_PROOF_VC_FORMAT,
  checkRequest: checkLdProofRequest,
};
