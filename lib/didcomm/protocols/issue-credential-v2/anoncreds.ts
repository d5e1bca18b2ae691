import { credentialRequestSchema, decimalString, nonceString } from '../../../anoncreds/request-shape';
import type { CredentialFormat, RequestCheck } from './formats';
import type { StoredExchange } from './records';

/**
 * Aries RFC 0771 (`anoncreds/*` attachment formats): the offer is anoncreds-rs' credential offer
 * `{schema_id, cred_def_id, key_correctness_proof, nonce}`, the request its credential request, the
 * credential its credential. The protocol half only: the structural check of the request runs in the
 * inbound DIDComm worker, which must not carry the CL arithmetic (its bundle budget); the holder's
 * blinded-secrets proof is checked by the issuing half (lib/anoncreds/issuance.ts) before it signs.
 */
export const ANONCREDS_OFFER_FORMAT = 'anoncreds/credential-offer@v1.0';
export const ANONCREDS_REQUEST_FORMAT = 'anoncreds/credential-request@v1.0';
export const ANONCREDS_CREDENTIAL_FORMAT = 'anoncreds/credential@v1.0';

// The shape module alone (zod): the arithmetic stays out of this worker's bundle.
const AnonCredsRequest = credentialRequestSchema(decimalString, nonceString);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The request names the offered definition, carries a blinded link secret with its proof and a fresh
 * nonce, in anoncreds-rs' shape and bounds. Pure and cheap: no modular arithmetic here (the blinded
 * revocation secret `ur`, needed when the definition is revocable, is parsed by the issuing half).
 */
export function checkAnonCredsRequest(offer: unknown, request: unknown): RequestCheck {
  if (!isObject(offer) || typeof offer.cred_def_id !== 'string') return { ok: false, problem: 'no offer on this exchange' };
  const parsed = AnonCredsRequest.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, problem: `the request is not an AnonCreds credential request${issue.path.length ? ` (at ${issue.path.join('.')})` : ''}: ${issue.message}` };
  }
  const r = parsed.data;
  if (r.cred_def_id !== offer.cred_def_id) return { ok: false, problem: 'the request names another credential definition than the offer' };
  return { ok: true, detail: request };
}

export const ANONCREDS: CredentialFormat = {
  name: 'anoncreds',
  offerFormat: ANONCREDS_OFFER_FORMAT,
  requestFormat: ANONCREDS_REQUEST_FORMAT,
  issueFormat: ANONCREDS_CREDENTIAL_FORMAT,
  checkRequest: checkAnonCredsRequest,
};

/** What the exchange keeps of an AnonCreds issuance (`format_record`); `cred_rev_id` is the revocation index, in decimal. */
export interface AnonCredsFormatRecord {
  readonly schema_id: string;
  readonly cred_def_id: string;
  readonly rev_reg_id: string | null;
  readonly cred_rev_id: string | null;
}

/** The `anoncreds` record of `GET /api/v1/credential-records/{id}` (ACA-Py's V20CredExRecordAnonCreds, with the offer, request and credential). */
export function anoncredsRecordView(x: StoredExchange): Record<string, unknown> {
  const o = x.format_options as { schema_id?: string; cred_def_id?: string; rev_reg_id?: string | null };
  const rec = (x.format_record ?? {}) as Partial<AnonCredsFormatRecord>;
  return {
    cred_ex_id: x.credential_exchange_id,
    schema_id: rec.schema_id ?? o.schema_id ?? null,
    cred_def_id: rec.cred_def_id ?? o.cred_def_id ?? null,
    rev_reg_id: rec.rev_reg_id ?? o.rev_reg_id ?? null,
    cred_rev_id: rec.cred_rev_id ?? null,
    offer: x.offer ?? null,
    request: x.request,
    credential: x.credential,
    created_at: x.created_at,
    updated_at: x.updated_at,
  };
}
