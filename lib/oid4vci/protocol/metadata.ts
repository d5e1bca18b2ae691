import type { ClaimLeaf, ClaimTree, DisplayEntry, IssuableConfiguration } from '../records';
import { isClaimLeaf } from '../supported';
import { PRE_AUTHORIZED_GRANT } from '../records';
import { VERIFIABLE_ALGS } from '../../oid4vc/callbacks';

/** Most proofs (credentials) one credential request may carry: advertised as `batch_credential_issuance`. */
export const BATCH_SIZE = 10;

export const DEFAULT_BINDING_METHODS = ['jwk', 'did:key', 'did:jwk'] as const;
export const CREDENTIAL_SIGNING_ALGS = ['EdDSA', 'ES256'] as const;

export function issuerEndpoints(issuer: string) {
  return {
    token: `${issuer}/token`,
    credential: `${issuer}/credential`,
    nonce: `${issuer}/nonce`,
    notification: `${issuer}/notification`,
    /** Never published: the library reads the access-token key from here in-process (lib/oid4vc/callbacks.ts). */
    jwks: `${issuer}/jwks`,
  };
}


const str = (v: unknown): v is string => typeof v === 'string' && v !== '';
const imageUri = (v: unknown): string | undefined => {
  const uri = v && typeof v === 'object' ? ((v as { uri?: unknown; url?: unknown }).uri ?? (v as { url?: unknown }).url) : undefined;
  return typeof uri === 'string' && /^(https:\/\/|data:)/i.test(uri) ? uri : undefined;
};

/**
 * Display entries as 1.0 §12.2.4 and Appendix B.2 define them, and only those members: `name`
 * (required), `locale`, `description`, `background_color`, `text_color` (strings), `logo` and
 * `background_image` (`uri` an https or data URL, `alt_text`; the contract's `logo.url` is the older
 * name). The admin API keeps whatever else was given; the metadata publishes nothing a wallet would
 * reject, so one odd entry cannot take a configuration out of the document.
 */
export function displayFor(entries: readonly DisplayEntry[] | null | undefined): DisplayEntry[] | undefined {
  const out = (entries ?? []).flatMap((e) => {
    if (!e || !str(e.name)) return [];
    const entry: Record<string, unknown> = { name: e.name };
    for (const k of ['locale', 'description', 'background_color', 'text_color'] as const) if (str(e[k])) entry[k] = e[k];
    for (const k of ['logo', 'background_image'] as const) {
      const uri = imageUri(e[k]);
      const alt = (e[k] as { alt_text?: unknown } | undefined)?.alt_text;
      if (uri) entry[k] = { uri, ...(str(alt) ? { alt_text: alt } : {}) };
    }
    return [entry as DisplayEntry];
  });
  return out.length > 0 ? out : undefined;
}

/** OpenID4VCI 1.0 Appendix B.2 claims description: one entry per claim (groups too), with its path. */
export function claimsDescription(tree: ClaimTree, prefix: string[] = []): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [name, node] of Object.entries(tree)) {
    const path = [...prefix, name];
    // The admin API's own rule for what is a leaf, so that a claim named `display` stays a claim.
    if (isClaimLeaf(node as Readonly<Record<string, unknown>>)) {
      const leaf = node as ClaimLeaf;
      const display = displayFor(leaf.display);
      out.push({ path, ...(leaf.mandatory ? { mandatory: true } : {}), ...(display ? { display } : {}) });
    } else {
      out.push({ path });
      out.push(...claimsDescription(node as ClaimTree, path));
    }
  }
  return out;
}

/** One `credential_configurations_supported` entry in the 1.0 shape (with `credential_metadata`, which 1.0 wallets key on). */
export function configurationMetadata(c: IssuableConfiguration): Record<string, unknown> {
  const display = displayFor(c.display);
  const common = {
    format: c.format,
    scope: c.id,
    cryptographic_binding_methods_supported: c.bindingMethods ?? [...DEFAULT_BINDING_METHODS],
    credential_signing_alg_values_supported: c.signingAlgs ?? [...CREDENTIAL_SIGNING_ALGS],
    proof_types_supported: { jwt: { proof_signing_alg_values_supported: [...VERIFIABLE_ALGS] } },
    credential_metadata: { ...(display ? { display } : {}), claims: claimsDescription(c.claims) },
    ...(display ? { display } : {}),
  };
  if (c.format === 'jwt_vc_json') {
    return { ...common, credential_definition: { type: c.types ?? ['VerifiableCredential'] } };
  }
  return { ...common, vct: c.vct };
}

export function credentialIssuerMetadata(issuer: string, label: string | null, configs: readonly IssuableConfiguration[]): Record<string, unknown> {
  const e = issuerEndpoints(issuer);
  return {
    credential_issuer: issuer,
    credential_endpoint: e.credential,
    nonce_endpoint: e.nonce,
    notification_endpoint: e.notification,
    batch_credential_issuance: { batch_size: BATCH_SIZE },
    ...(label ? { display: [{ name: label }] } : {}),
    credential_configurations_supported: Object.fromEntries(configs.map((c) => [c.id, configurationMetadata(c)])),
  };
}

/** RFC 8414 metadata of the issuer's own authorization server (pre-authorized code grant only). */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    token_endpoint: issuerEndpoints(issuer).token,
    grant_types_supported: [PRE_AUTHORIZED_GRANT],
    'pre-authorized_grant_anonymous_access_supported': true,
    token_endpoint_auth_methods_supported: ['none'],
    dpop_signing_alg_values_supported: [...VERIFIABLE_ALGS],
  };
}
