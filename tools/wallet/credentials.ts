import { SDJwtInstance } from '@sd-jwt/core';
import { digest } from '@sd-jwt/crypto-nodejs';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { verifyWithDidKey } from './callbacks';
import { messageOf, WalletError } from './errors';
import type { StoredCredential, CredentialFormat } from './store';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** @sd-jwt's hasher (sha-256 and friends, node:crypto). */
export const hasher = (data: string | ArrayBuffer, alg: string) => digest(data, alg);

/** Claims SD-JWT VC and JWT set about the credential itself, shown apart from the subject's claims. */
const SD_JWT_ENVELOPE = ['iss', 'iat', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status', 'sub', 'jti', '_sd_alg'];

/** @sd-jwt's dotted presentable keys ("address.street") as JSON pointers ("/address/street"). */
export const dottedToPointer = (key: string) => `/${key.split('.').map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

const seconds = (v: unknown) => (typeof v === 'number' ? new Date(v * 1000).toISOString() : null);

/** What `show` prints and `--json` returns for a credential. */
export interface CredentialView {
  readonly id: string;
  readonly format: CredentialFormat;
  readonly issuer: string;
  readonly vct: string | null;
  readonly types: string[] | null;
  /** The subject's claims (every disclosure applied, for SD-JWT). */
  readonly claims: Json;
  /** JSON pointers of the selectively disclosable claims (SD-JWT); empty for a JWT VC. */
  readonly disclosable: string[];
  /** The status list reference: SD-JWT VC `status` or W3C `credentialStatus`, as issued; null when none. */
  readonly status: unknown;
  readonly holder_binding: { readonly method: StoredCredential['binding']; readonly key: string; readonly did_url: string | null };
  readonly issued_at: string | null;
  readonly expires_at: string | null;
  readonly credential_issuer: string;
  readonly credential_configuration_id: string;
  readonly received_at: string;
}

/** The decoded payload of a credential: SD-JWT claims with every disclosure applied, or the VC-JWT's payload. */
export async function decodedPayload(format: CredentialFormat, compact: string): Promise<{ header: Json; payload: Json; disclosable: string[] }> {
  try {
    if (format === 'jwt_vc_json') return { header: decodeProtectedHeader(compact) as Json, payload: decodeJwt(compact) as Json, disclosable: [] };
    const sdjwt = new SDJwtInstance({ hasher });
    const decoded = await sdjwt.decode(compact);
    const payload = (await sdjwt.getClaims(compact)) as Json;
    const disclosable = (await sdjwt.presentableKeys(compact)).map(dottedToPointer).sort();
    return { header: (decoded.jwt?.header ?? {}) as Json, payload, disclosable };
  } catch (err) {
    throw new WalletError('invalid_credential', `the ${format} credential cannot be decoded: ${messageOf(err)}`);
  }
}

export async function credentialView(c: StoredCredential): Promise<CredentialView> {
  const { payload, disclosable } = await decodedPayload(c.format, c.credential);
  let claims: Json;
  let status: unknown = null;
  let vct: string | null = null;
  let types: string[] | null = null;
  if (c.format === 'jwt_vc_json') {
    const vc = isObject(payload.vc) ? payload.vc : {};
    const subject = Array.isArray(vc.credentialSubject) ? vc.credentialSubject[0] : vc.credentialSubject;
    claims = isObject(subject) ? subject : {};
    status = vc.credentialStatus ?? null;
    types = Array.isArray(vc.type) ? vc.type.filter((t): t is string => typeof t === 'string') : null;
  } else {
    claims = Object.fromEntries(Object.entries(payload).filter(([k]) => !SD_JWT_ENVELOPE.includes(k)));
    status = payload.status ?? null;
    vct = typeof payload.vct === 'string' ? payload.vct : null;
  }
  return {
    id: c.id,
    format: c.format,
    issuer: c.issuer,
    vct,
    types,
    claims,
    disclosable,
    status,
    holder_binding: { method: c.binding, key: c.key_id, did_url: c.holder_did_url },
    issued_at: seconds(payload.iat),
    expires_at: seconds(payload.exp),
    credential_issuer: c.credential_issuer,
    credential_configuration_id: c.credential_configuration_id,
    received_at: c.received_at,
  };
}

/**
 * A credential just received, checked as a wallet must before keeping it: the issuer's signature with
 * the key its DID names (did:key, did:jwk, did:web), its validity dates, the format the issuer
 * advertised, and that it is bound to the key the wallet proved (cnf.jwk, cnf.kid or sub).
 * Returns the issuer (`iss`).
 */
export async function verifyReceived(
  format: CredentialFormat,
  compact: string,
  holder: { readonly key: JWK; readonly didUrl: string | null },
): Promise<string> {
  const fail = (why: string): never => {
    throw new WalletError('invalid_credential', `the issuer sent a credential the wallet refuses: ${why}`);
  };
  const jwt = format === 'jwt_vc_json' ? compact : compact.split('~')[0]!;
  let header: Json;
  let payload: Json;
  try {
    header = decodeProtectedHeader(jwt) as Json;
    payload = decodeJwt(jwt) as Json;
  } catch {
    return fail(`not a ${format} credential`);
  }
  const iss = typeof payload.iss === 'string' ? payload.iss : undefined;
  if (!iss) return fail('it names no issuer (iss)');
  if (format !== 'jwt_vc_json' && header.typ !== 'dc+sd-jwt' && header.typ !== 'vc+sd-jwt') fail(`its typ is ${String(header.typ)}, not an SD-JWT VC`);

  const { verified, didUrl } = await verifyWithDidKey(jwt, header, iss);
  if (!verified) fail(`its signature does not verify with ${didUrl}`);
  if (iss.startsWith('did:') && didUrl.split('#')[0] !== iss) fail(`it is signed by ${didUrl}, not by a key of its issuer ${iss}`);

  if (format !== 'jwt_vc_json') {
    // @sd-jwt checks every disclosure's digest against the signed payload (and iat/nbf/exp).
    try {
      await new SDJwtInstance({ hasher, verifier: () => true }).verify(compact);
    } catch (err) {
      fail(messageOf(err));
    }
  }
  const now = Date.now() / 1000;
  if (typeof payload.exp === 'number' && payload.exp < now) fail('it has already expired');

  const cnf = isObject(payload.cnf) ? payload.cnf : undefined;
  const thumb = await calculateJwkThumbprint(holder.key);
  const boundByJwk = isObject(cnf?.jwk) ? (await calculateJwkThumbprint(cnf.jwk as JWK)) === thumb : false;
  const boundByDid = holder.didUrl !== null && (cnf?.kid === holder.didUrl || payload.sub === holder.didUrl.split('#')[0]);
  if (!boundByJwk && !boundByDid) fail('it is not bound to the key the wallet proved possession of');
  return iss;
}
