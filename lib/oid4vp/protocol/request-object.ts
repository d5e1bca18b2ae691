import { createOpenid4vpAuthorizationRequest } from '@openid4vc/openid4vp';
import type { JwtSigner } from '@openid4vc/oauth2';
import type { PublicJwk } from '../../keys/port';
import type { IssuerSigner } from '../../keys/signer';
import { signCompactJws } from '../../keys/signer';
import { clientIdOf, formatFamily } from '../presentations';
import type { PresentationRecord, VpFormats } from '../records';

/** How long a signed request object is good for once retrieved (its `exp`); the request's own lifetime still applies. */
const REQUEST_OBJECT_TTL_SECONDS = 300;
/** OpenID4VP 1.0 §5.8: the request object's `aud` under static wallet discovery. */
const SELF_ISSUED_AUDIENCE = 'https://self-issued.me/v2';

const algsOf = (v: Record<string, readonly string[]> | undefined, ...names: string[]): string[] => [...new Set(names.flatMap((n) => [...(v?.[n] ?? [])]))];

/** OpenID4VP 1.0 `vp_formats_supported` (§11.1): SD-JWT VC is `dc+sd-jwt` there, whichever media type the caller named. */
export function vpFormatsSupported(formats: VpFormats): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  for (const [format, v] of Object.entries(formats)) {
    if (formatFamily(format) === 'sd-jwt') {
      const sd = algsOf(v, 'sd-jwt_alg_values', 'alg');
      const kb = algsOf(v, 'kb-jwt_alg_values', 'alg');
      out['dc+sd-jwt'] = { ...(sd.length ? { 'sd-jwt_alg_values': sd } : {}), ...(kb.length ? { 'kb-jwt_alg_values': kb } : {}) };
    } else {
      const algs = algsOf(v, 'alg_values', 'alg');
      out[format] = algs.length ? { alg_values: algs } : {};
    }
  }
  return out;
}

/** The draft (Presentation Exchange era) `vp_formats`: the contract's own shape, with `alg` lists for the JWT formats. */
export function draftVpFormats(formats: VpFormats): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  for (const [format, v] of Object.entries(formats)) {
    if (formatFamily(format) === 'sd-jwt') out[format] = { 'sd-jwt_alg_values': algsOf(v, 'sd-jwt_alg_values', 'alg'), 'kb-jwt_alg_values': algsOf(v, 'kb-jwt_alg_values', 'alg') };
    else out[format] = { alg: algsOf(v, 'alg_values', 'alg') };
  }
  return out;
}

/**
 * The authorization request a wallet sees (§5): 1.0 form (prefixed client id, DCQL) or the draft form
 * (bare DID with `client_id_scheme: did`, the stored Presentation Exchange definition). The response
 * endpoint rebuilds the same payload to check the answer against, so it is a function of the record.
 */
export function authorizationRequestPayload(r: PresentationRecord, form: 'v1' | 'draft', responseUri: string): Record<string, unknown> {
  const common = { response_type: 'vp_token', response_mode: 'direct_post', response_uri: responseUri, nonce: r.nonce, state: r.oauth_state };
  if (form === 'v1') {
    return { ...common, client_id: clientIdOf(r.verifier_did, 'v1'), dcql_query: r.query.dcql, client_metadata: { vp_formats_supported: vpFormatsSupported(r.vp_formats) } };
  }
  if (r.query.kind !== 'pe') throw new Error('a DCQL request has no draft form');
  return {
    ...common,
    client_id: clientIdOf(r.verifier_did, 'draft'),
    client_id_scheme: 'did',
    presentation_definition: r.query.definition,
    client_metadata: { vp_formats: draftVpFormats(r.vp_formats) },
  };
}

/** The signed request object (`typ oauth-authz-req+jwt`), built and checked by `@openid4vc/openid4vp`, signed through the key manager. */
export async function signRequestObject(payload: Record<string, unknown>, requestUri: string, signer: IssuerSigner, publicJwk: PublicJwk, now: Date): Promise<string> {
  const jwtSigner: JwtSigner = { method: 'did', didUrl: signer.kid, alg: signer.alg };
  const created = await createOpenid4vpAuthorizationRequest({
    scheme: 'openid://',
    authorizationRequestPayload: payload as never,
    jar: { requestUri, jwtSigner, expiresInSeconds: REQUEST_OBJECT_TTL_SECONDS, additionalJwtPayload: { aud: SELF_ISSUED_AUDIENCE } },
    callbacks: {
      signJwt: async (_signer, jwt) => ({ jwt: await signCompactJws(signer, jwt.header, jwt.payload), signerJwk: { ...publicJwk } }),
      encryptJwe: async () => {
        throw new Error('request objects are signed, not encrypted');
      },
    },
    now,
  });
  return created.jar!.authorizationRequestJwt;
}
