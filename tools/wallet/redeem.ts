import {
  Oauth2Client,
  getAuthorizationServerMetadataFromList,
  preAuthorizedCodeGrantIdentifier,
  type JwtSigner,
  type RequestDpopOptions,
} from '@openid4vc/oauth2';
import { Openid4vciClient, Openid4vciRetrieveCredentialsError, Openid4vciVersion, type CredentialOfferObject, type IssuerMetadataResult } from '@openid4vc/openid4vci';
import type { JWK } from 'jose';
import { HolderCallbacks } from './callbacks';
import { libraryError, type WalletContext } from './context';
import { credentialView, verifyReceived, type CredentialView } from './credentials';
import { WalletError } from './errors';
import { didUrlOf, generateHolderKey, HOLDER_ALGS, type HolderAlg } from './keys';
import type { Binding, CredentialFormat, StoredCredential } from './store';

export interface RedeemOptions {
  /** The transaction code (PIN) the offer asks for. */
  readonly pin?: string;
  /** Bind the access token with DPoP when the authorization server advertises it (default true). */
  readonly dpop?: boolean;
}

export interface RedeemResult {
  readonly credential_issuer: string;
  readonly token_type: string;
  readonly dpop: boolean;
  readonly credentials: CredentialView[];
  /** Whether the issuer was told `credential_accepted` for each credential (null: it has no notification endpoint). */
  readonly notified: (boolean | null)[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const FORMATS: readonly CredentialFormat[] = ['dc+sd-jwt', 'vc+sd-jwt', 'jwt_vc_json'];

/**
 * Whatever the person pasted, as the offer URI the library resolves: an `openid-credential-offer://`
 * (or any) URI with `credential_offer` / `credential_offer_uri`, a bare https/http URL of an offer
 * (by reference), or the offer's JSON.
 */
export function offerUri(input: string): string {
  const text = input.trim();
  if (text.startsWith('{')) {
    try {
      JSON.parse(text);
    } catch {
      throw new WalletError('invalid_offer', 'the offer looks like JSON but does not parse');
    }
    return `openid-credential-offer://?credential_offer=${encodeURIComponent(text)}`;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WalletError('invalid_offer', 'not a credential offer: expected openid-credential-offer://?credential_offer=…, …?credential_offer_uri=…, an offer URL or the offer JSON');
  }
  if (url.searchParams.has('credential_offer') || url.searchParams.has('credential_offer_uri')) return text;
  if (url.protocol === 'https:' || url.protocol === 'http:') return `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(text)}`;
  throw new WalletError('invalid_offer', `not a credential offer: ${url.protocol} URI without credential_offer or credential_offer_uri`);
}

/** The binding a configuration allows, in the wallet's order of preference for its format. */
function chooseBinding(format: CredentialFormat, methods: readonly string[] | undefined): Binding {
  // A JWT VC is presented inside a VP its holder signs as a DID; an SD-JWT VC's plain key (cnf.jwk) suffices.
  const preference: Binding[] = format === 'jwt_vc_json' ? ['did:key', 'did:jwk', 'jwk'] : ['jwk', 'did:key', 'did:jwk'];
  if (!methods || methods.length === 0) return preference[0]!;
  const found = preference.find((b) => methods.includes(b));
  if (!found) throw new WalletError('unsupported', `the issuer binds this credential to ${methods.join(', ')}; the wallet can bind to jwk, did:key or did:jwk`);
  return found;
}

function chooseAlg(algs: readonly string[] | undefined, what: string): HolderAlg {
  if (!algs || algs.length === 0) return 'ES256';
  const found = HOLDER_ALGS.find((a) => algs.includes(a));
  if (!found) throw new WalletError('unsupported', `the issuer accepts ${what} signed with ${algs.join(', ')}; the wallet signs ES256 or EdDSA`);
  return found;
}

function describeOffer(offer: CredentialOfferObject): string {
  const grant = offer.grants?.[preAuthorizedCodeGrantIdentifier];
  const tx = grant?.tx_code;
  const pin = tx ? `, PIN required${tx.input_mode ? ` (${tx.input_mode}${tx.length ? `, ${tx.length} characters` : ''})` : ''}` : '';
  return `offer from ${offer.credential_issuer}: ${offer.credential_configuration_ids.join(', ')}${grant ? `; pre-authorized code${pin}` : ''}`;
}

/** OpenID4VCI pre-authorized code flow, start to finish, with the protocol libraries' client side. */
export async function redeem(ctx: WalletContext, input: string, opts: RedeemOptions = {}): Promise<RedeemResult> {
  const uri = offerUri(input);
  const callbacks = new HolderCallbacks();
  const client = new Openid4vciClient({ callbacks: callbacks.context() });
  const oauth2 = new Oauth2Client({ callbacks: callbacks.context() });

  let offer: CredentialOfferObject;
  try {
    offer = await client.resolveCredentialOffer(uri);
  } catch (err) {
    throw libraryError(err, 'resolving the offer', 'invalid_offer');
  }
  ctx.log(describeOffer(offer));

  let metadata: IssuerMetadataResult;
  try {
    metadata = await client.resolveIssuerMetadata(offer.credential_issuer);
  } catch (err) {
    throw libraryError(err, `reading the metadata of ${offer.credential_issuer}`, 'issuer_error');
  }
  ctx.log(`issuer metadata: ${Object.keys(metadata.credentialIssuer.credential_configurations_supported).length} configuration(s), OpenID4VCI ${metadata.originalDraftVersion}`);

  const grant = offer.grants?.[preAuthorizedCodeGrantIdentifier];
  if (!grant) throw new WalletError('unsupported', 'the offer has no pre-authorized code grant; the wallet does not do the authorization code flow');
  if (grant.tx_code && opts.pin === undefined) {
    const tx = grant.tx_code;
    throw new WalletError('usage', `this offer needs a PIN${tx.description ? ` (${tx.description})` : ''}: pass --pin <${tx.input_mode ?? 'text'}${tx.length ? `, ${tx.length} characters` : ''}>`);
  }
  const txCode = grant.tx_code ? opts.pin : undefined;
  if (!grant.tx_code && opts.pin !== undefined) ctx.log('the offer asks for no PIN: --pin is not sent');

  const configurations = offer.credential_configuration_ids.map((id) => {
    const configuration = metadata.knownCredentialConfigurations[id];
    if (!configuration) throw new WalletError('unsupported', `the issuer's metadata does not describe ${id} in a format the libraries know`);
    if (!FORMATS.includes(configuration.format as CredentialFormat)) throw new WalletError('unsupported', `${id} is ${configuration.format}; the wallet takes ${FORMATS.join(', ')}`);
    return { id, configuration, format: configuration.format as CredentialFormat };
  });

  // DPoP (RFC 9449) when the authorization server advertises it: one fresh key for this redemption, never stored.
  const asMetadata = getAuthorizationServerMetadataFromList(metadata.authorizationServers, grant.authorization_server ?? metadata.authorizationServers[0]!.issuer);
  const dpopSupport = oauth2.isDpopSupported({ authorizationServerMetadata: asMetadata });
  let dpop: RequestDpopOptions | undefined;
  if (dpopSupport.supported && opts.dpop !== false) {
    const key = await generateHolderKey(chooseAlg(dpopSupport.dpopSigningAlgValuesSupported, 'DPoP proofs'));
    callbacks.add(key);
    dpop = { signer: { method: 'jwk', alg: key.alg, publicJwk: key.publicJwk as never } };
  }

  let token;
  try {
    token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({ credentialOffer: offer, issuerMetadata: metadata, ...(txCode !== undefined ? { txCode } : {}), ...(dpop ? { dpop } : {}) });
  } catch (err) {
    throw libraryError(err, 'the token request was refused', 'issuer_error');
  }
  const accessToken = token.accessTokenResponse.access_token;
  const tokenType = token.accessTokenResponse.token_type;
  let dpopNonce = token.dpop?.nonce;
  ctx.log(`access token: ${tokenType}${dpop ? ` (DPoP-bound, ${dpop.signer.alg} key)` : dpopSupport.supported ? ' (DPoP advertised, not used: --no-dpop)' : ' (DPoP not advertised)'}${txCode !== undefined ? ', PIN accepted' : ''}`);
  let cNonce = token.accessTokenResponse.c_nonce;

  const credentials: CredentialView[] = [];
  const notified: (boolean | null)[] = [];
  for (const { id: configurationId, configuration, format } of configurations) {
    if (metadata.credentialIssuer.nonce_endpoint) {
      try {
        cNonce = (await client.requestNonce({ issuerMetadata: metadata })).c_nonce;
      } catch (err) {
        throw libraryError(err, 'the nonce request failed', 'issuer_error');
      }
      ctx.log(`c_nonce from the nonce endpoint`);
    }
    if (!cNonce) throw new WalletError('issuer_error', 'the issuer gave no c_nonce (no nonce endpoint, none with the token)');

    const binding = chooseBinding(format, configuration.cryptographic_binding_methods_supported as string[] | undefined);
    const alg = chooseAlg(configuration.proof_types_supported?.jwt?.proof_signing_alg_values_supported, 'key proofs');
    const key = await generateHolderKey(alg);
    await ctx.store.saveKey(key);
    callbacks.add(key);
    const holderDidUrl = binding === 'jwk' ? null : didUrlOf(key, binding);
    const signer: JwtSigner = holderDidUrl ? { method: 'did', didUrl: holderDidUrl, alg } : { method: 'jwk', publicJwk: key.publicJwk as never, alg };

    const { jwt } = await client.createCredentialRequestJwtProof({ issuerMetadata: metadata, credentialConfigurationId: configurationId, signer, nonce: cNonce });
    ctx.log(`key proof: new ${alg} holder key ${key.id.slice(0, 12)}…, bound as ${binding}`);

    // Draft 11 (and draft 14 without batch issuance) take a single `proof`; 1.0 takes `proofs`.
    const single = metadata.originalDraftVersion === Openid4vciVersion.Draft11 || (metadata.originalDraftVersion === Openid4vciVersion.Draft14 && metadata.credentialIssuer.batch_credential_issuance === undefined);
    let response;
    try {
      response = await client.retrieveCredentials({
        issuerMetadata: metadata,
        accessToken,
        credentialConfigurationId: configurationId,
        ...(single ? { proof: { proof_type: 'jwt', jwt } } : { proofs: { jwt: [jwt] } }),
        ...(dpop ? { dpop: { ...dpop, ...(dpopNonce ? { nonce: dpopNonce } : {}) } } : {}),
      });
    } catch (err) {
      if (err instanceof Openid4vciRetrieveCredentialsError && err.response.credentialErrorResponseResult?.success) {
        const body = err.response.credentialErrorResponseResult.data;
        throw new WalletError('issuer_error', `the credential request was refused: ${err.response.response.status} ${body.error}${body.error_description ? ` (${body.error_description})` : ''}`);
      }
      throw libraryError(err, 'the credential request failed', 'issuer_error');
    }
    dpopNonce = response.dpop?.nonce ?? dpopNonce;
    const body = response.credentialResponse;
    cNonce = body.c_nonce ?? cNonce;
    const issued = body.credentials?.map((c) => (isObject(c) && 'credential' in c ? c.credential : c)) ?? (body.credential !== undefined ? [body.credential] : []);
    const compact = issued[0];
    if (typeof compact !== 'string') throw new WalletError('issuer_error', body.transaction_id ? 'the issuer deferred the credential (transaction_id); the wallet does not do deferred issuance' : 'the credential response holds no credential');

    const issuer = await verifyReceived(format, compact, { key: key.publicJwk as JWK, didUrl: holderDidUrl });
    ctx.log(`credential: ${format} from ${issuer}, signature and holder binding checked`);
    const stored: StoredCredential = {
      id: ctx.store.newCredentialId(),
      format,
      credential: compact,
      issuer,
      credential_issuer: offer.credential_issuer,
      credential_configuration_id: configurationId,
      key_id: key.id,
      binding,
      holder_did_url: holderDidUrl,
      received_at: new Date().toISOString(),
    };
    await ctx.store.saveCredential(stored);
    ctx.log(`stored as ${stored.id} in ${ctx.store.dir}`);
    credentials.push(await credentialView(stored));

    notified.push(await notify(ctx, client, metadata, accessToken, body.notification_id, dpop, dpopNonce));
  }
  return { credential_issuer: offer.credential_issuer, token_type: tokenType, dpop: dpop !== undefined, credentials, notified };
}

/** OpenID4VCI §11: tell the issuer the credential was accepted; a failure here is reported, not fatal (the credential is kept). */
async function notify(
  ctx: WalletContext,
  client: Openid4vciClient,
  metadata: IssuerMetadataResult,
  accessToken: string,
  notificationId: string | undefined,
  dpop: RequestDpopOptions | undefined,
  dpopNonce: string | undefined,
): Promise<boolean | null> {
  if (!notificationId || !metadata.credentialIssuer.notification_endpoint) return null;
  try {
    await client.sendNotification({
      issuerMetadata: metadata,
      accessToken,
      notification: { notificationId, event: 'credential_accepted' },
      ...(dpop ? { dpop: { ...dpop, ...(dpopNonce ? { nonce: dpopNonce } : {}) } } : {}),
    });
    ctx.log('issuer notified: credential_accepted');
    return true;
  } catch (err) {
    ctx.log(`warning: ${libraryError(err, 'the notification failed', 'issuer_error').message}`);
    return false;
  }
}
