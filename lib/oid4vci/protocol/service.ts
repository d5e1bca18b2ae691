import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeJwt,
  HashAlgorithm,
  Oauth2AuthorizationServer,
  Oauth2ErrorCodes,
  Oauth2ResourceServer,
  Oauth2ResourceUnauthorizedError,
  Oauth2ServerErrorResponseError,
  preAuthorizedCodeGrantIdentifier,
  type Jwk,
  type RequestLike,
} from '@openid4vc/oauth2';
import { Openid4vciIssuer, Openid4vciVersion, type IssuerMetadataResult } from '@openid4vc/openid4vci';
import { ValidationError as LibraryValidationError } from '@openid4vc/utils';
import { didFromItem, qualify } from '../../dids/records';
import type { EventPublisher } from '../../events/publisher';
import { errorDescription, NotFoundError, ProtocolError } from '../../http/errors';
import type { KeyManager } from '../../keys/port';
import { issuerSigner } from '../../keys/signer';
import { oid4vcCallbacks, type CallbackKeys } from '../../oid4vc/callbacks';
import { headerJwk, privateJwkMembers } from '../../oid4vc/jwk';
import { keys, WALLET_ISSUER_VERSION, type TenantScope } from '../../store/keys';
import { memo } from '../../memo';
import { retryingConflicts } from '../../store/retry';
import { ConditionFailedError, WriteConflictError, type ItemKey, type ItemStore, type WriteOp } from '../../store/port';
import { configurationFromItem, isSdJwt, issuableConfiguration, supportedFromItem } from '../supported';
import { lookupHash, oid4vciKeys, SK, type ExchangeRecord, type ExchangeTransitionState, type IssuableConfiguration, type SupportedFormat } from '../records';
import { exchangeFromItem, exchangeTransition, settleExpired } from '../exchanges';
import { issueCredential, StatusDefinitionGoneError, StatusIssuerMismatchError, type HolderBinding, type StatusAllocation, type StatusEntrySource } from './formats';
import { es256Sign, mintNonce, nonceExpiry, type IssuerSecretSource, type IssuerSecrets } from './issuer-secrets';
import { authorizationServerMetadata, BATCH_SIZE, credentialIssuerMetadata, DEFAULT_BINDING_METHODS, issuerEndpoints } from './metadata';

export interface IssuerProtocolSettings {
  /** Access-token lifetime: one credential request and, after the holder's decision, the notification. */
  readonly accessTokenTtlSeconds: number;
  readonly cNonceTtlSeconds: number;
  /** Wrong tx_codes before the pre-authorized code is burnt. */
  readonly maxTxCodeAttempts: number;
  /** `exp` of issued credentials, counted from issuance. */
  readonly credentialValiditySeconds: number;
  /** How far a DPoP proof's `iat` may be from now (RFC 9449 §11.1). */
  readonly dpopWindowSeconds: number;
}

export const DEFAULT_PROTOCOL_SETTINGS: IssuerProtocolSettings = {
  accessTokenTtlSeconds: 300,
  cNonceTtlSeconds: 300,
  maxTxCodeAttempts: 5,
  credentialValiditySeconds: 365 * 86400,
  dpopWindowSeconds: 300,
};

export interface IssuerProtocolDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly keyManager: KeyManager;
  readonly secrets: IssuerSecretSource;
  readonly status: StatusEntrySource | null;
  readonly settings?: IssuerProtocolSettings;
  readonly now?: () => Date;
}

/** What the endpoints receive from the router: the request as the protocol sees it. */
export interface ProtocolRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** A metadata document as served: its JSON text and a strong entity tag of that text. */
export interface MetadataDocument {
  readonly body: string;
  readonly etag: string;
}

function serialized(doc: Record<string, unknown>): MetadataDocument {
  const body = JSON.stringify(doc);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** Private claims of our access tokens (RFC 9068 allows them): the exchange's configuration and issuer DID. */
const TOKEN_CLAIMS = { configuration: 'scd', issuerDid: 'idid' } as const;

const statusChanged = () => new ProtocolError(503, 'server_error', 'A status list of this credential changed during issuance; send the request again');
/** The allocator's "definition deleted meanwhile" as the credential endpoint answers it; anything else as it is. */
const retryable = (e: unknown): never => {
  if (e instanceof StatusDefinitionGoneError) throw statusChanged();
  throw e;
};

const notForThisIssuer = (scheme: string) => unauthorized(scheme, 'invalid_token', 'The access token is not valid for this issuer');

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

const invalid = (error: string, description: string, status = 400) => new ProtocolError(status, error, description);

/**
 * RFC 7235 challenges, each parameter that has a value quoted. The library's own encoder writes a bare
 * name for an absent parameter (`Bearer error, error_description, scope` when no token was sent), which
 * is not RFC 7235 syntax; RFC 6750 §3 asks for no error code then, so the challenge is the scheme alone.
 */
function challenges(list: readonly { scheme: string; params: Readonly<Record<string, string | undefined>> }[]): string {
  return list
    .map(({ scheme, params }) => {
      const set = Object.entries(params).flatMap(([name, value]) => (value ? [`${name}="${errorDescription(value)}"`] : []));
      return set.length > 0 ? `${scheme} ${set.join(', ')}` : scheme;
    })
    .join(', ');
}

/**
 * Library errors carry protocol data: turn them into our ProtocolError (the only thing that speaks to
 * the caller). The openid4vci methods answer their own malformed input with the endpoint's code
 * (`invalid_credential_request`, `invalid_proof`); a bare validation error is `invalidInput`, the code
 * for whatever the call reads by schema (`invalid_request` unless the caller knows better).
 */
export function toProtocolError(e: unknown, invalidInput: string = Oauth2ErrorCodes.InvalidRequest): unknown {
  if (e instanceof Oauth2ResourceUnauthorizedError) {
    const challenge = e.wwwAuthenticateHeaders[0];
    return new ProtocolError(401, challenge?.error ?? 'invalid_token', challenge?.error_description ?? 'The access token is missing or invalid', {
      'www-authenticate': challenges(e.wwwAuthenticateHeaders.map((c) => ({ scheme: c.scheme, params: { error: c.error, error_description: c.error_description, scope: c.scope, ...c.additionalPayload } }))),
    });
  }
  if (e instanceof Oauth2ServerErrorResponseError) {
    return new ProtocolError(e.status, e.errorResponse.error, e.errorResponse.error_description ?? e.errorResponse.error);
  }
  if (e instanceof LibraryValidationError) return invalid(invalidInput, e.message);
  return e;
}

async function mapped<T>(fn: () => Promise<T> | T, invalidInput?: string): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toProtocolError(e, invalidInput);
  }
}

/** The headers the libraries read; others (any bytes a client sends) never reach `Headers`, which refuses non-Latin-1. */
const PROTOCOL_HEADERS = ['authorization', 'dpop', 'content-type', 'oauth-client-attestation', 'oauth-client-attestation-pop'] as const;

function requestLike(r: ProtocolRequest): RequestLike {
  const headers = new Headers();
  for (const name of PROTOCOL_HEADERS) {
    const value = r.headers[name];
    if (value === undefined) continue;
    if (!/^[\x20-\x7e]*$/.test(value)) throw invalid(Oauth2ErrorCodes.InvalidRequest, `The ${name} header must be visible ASCII`);
    headers.set(name, value);
  }
  return { method: r.method as RequestLike['method'], url: r.url, headers };
}

/**
 * RFC 9449 §4.3 (7): the DPoP proof's `jwk` must not hold a private key. Refused before anything is
 * read or spent, as the endpoint refuses any invalid proof: 400 at the token endpoint, 401 with the
 * DPoP challenge at a resource.
 */
function refusePrivateDpopKey(request: ProtocolRequest, atResource: boolean): void {
  const proof = request.headers.dpop;
  const exposed = proof === undefined ? [] : privateJwkMembers(headerJwk(proof));
  if (exposed.length === 0) return;
  const description = `The DPoP proof's jwk header holds private key members (${exposed.join(', ')}); send the public key only`;
  throw atResource ? unauthorized('DPoP', Oauth2ErrorCodes.InvalidDpopProof, description) : invalid(Oauth2ErrorCodes.InvalidDpopProof, description);
}

/** A resource server's refusal (RFC 6750 §3, RFC 9449 §7.1): 401 with the challenge of the token's scheme. */
function unauthorized(scheme: string, error: string, description: string): ProtocolError {
  return new ProtocolError(401, error, description, { 'www-authenticate': challenges([{ scheme: scheme === 'DPoP' ? 'DPoP' : 'Bearer', params: { error } }]) });
}

/**
 * The public side of a wallet's credential issuer (OpenID4VCI 1.0, pre-authorized code flow), built
 * on `@openid4vc/openid4vci` and `@openid4vc/oauth2` with crypto injected (lib/oid4vc/callbacks.ts).
 * Every call runs in the wallet's session: codes, tokens and exchanges are found only in its partition.
 * `issuer` is the identifier the request was addressed to, `<base>/oid4vci/<public_ref>` (operations.ts
 * builds it from the path's reference, which named this wallet).
 * One-time values are spent with conditional writes in the same transaction as the state they move.
 */
export class IssuerProtocol {
  private readonly settings: IssuerProtocolSettings;
  private readonly now: () => Date;

  constructor(private readonly deps: IssuerProtocolDeps) {
    this.settings = deps.settings ?? DEFAULT_PROTOCOL_SETTINGS;
    this.now = deps.now ?? (() => new Date());
  }

  private async callbacks(scope: TenantScope, issuer: string): Promise<{ callbacks: ReturnType<typeof oid4vcCallbacks>; secrets: IssuerSecrets }> {
    const secrets = await this.deps.secrets.of(scope.walletId);
    const { privateKey, publicJwk } = secrets.tokenKey;
    const tokenKey: CallbackKeys['tokenKey'] = { publicJwk: publicJwk as Jwk, jwksUri: issuerEndpoints(issuer).jwks, sign: (d) => es256Sign(privateKey, d) };
    return { callbacks: oid4vcCallbacks({ tokenKey }), secrets };
  }

  /**
   * The wallet record: whether the issuer exists, its label, and `issuer_version` (WALLET_ISSUER_VERSION),
   * which every change of its supported credentials increments in the change's own transaction.
   */
  private async walletState(scope: TenantScope): Promise<{ label: string | null; version: number }> {
    const wallet = await this.deps.store.get(keys.wallet(scope));
    if (!wallet) throw new NotFoundError('No such credential issuer', 'issuer_not_found');
    const version = wallet[WALLET_ISSUER_VERSION];
    return { label: typeof wallet.label === 'string' && wallet.label ? wallet.label : null, version: typeof version === 'number' ? version : 0 };
  }

  private async configurations(scope: TenantScope): Promise<IssuableConfiguration[]> {
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: SK.supported });
    return items.map((i) => issuableConfiguration(supportedFromItem(i)));
  }

  /**
   * The credential issuer metadata, serialized, per issuer URL and kept per instance: the document
   * changes only with the wallet's supported credentials (which bump its issuer_version) or its label,
   * so a request reads the wallet record alone and rebuilds only when either differs from what was
   * built. Other instances see the change through the same record.
   */
  private readonly documents = new Map<string, MetadataDocument & { readonly version: number; readonly label: string | null }>();

  async issuerMetadataDocument(scope: TenantScope, issuer: string): Promise<MetadataDocument> {
    const { label, version } = await this.walletState(scope);
    const key = `${scope.walletId}|${issuer}`;
    const cached = this.documents.get(key);
    if (cached && cached.version === version && cached.label === label) return cached;
    const doc = { ...serialized(await this.buildIssuerMetadata(scope, issuer, label)), version, label };
    if (this.documents.size >= 1000) this.documents.delete(this.documents.keys().next().value!);
    this.documents.set(key, doc);
    return doc;
  }

  async issuerMetadata(scope: TenantScope, issuer: string): Promise<Record<string, unknown>> {
    return JSON.parse((await this.issuerMetadataDocument(scope, issuer)).body) as Record<string, unknown>;
  }

  private async buildIssuerMetadata(scope: TenantScope, issuer: string, label: string | null): Promise<Record<string, unknown>> {
    const lib = new Openid4vciIssuer({ callbacks: oid4vcCallbacks() });
    // A configuration the library (and so wallets) would reject is left out, not allowed to break the
    // whole document: every other configuration of the wallet stays offerable.
    const usable = (await this.configurations(scope)).filter((c) => this.metadataOf(issuer, c) !== null);
    const metadata = credentialIssuerMetadata(issuer, label, usable);
    // One document for both generations, as the library builds it: the 1.0 `credential_configurations_supported`
    // plus draft 11's `credentials_supported` array (1.0 wallets ignore it; draft-11 wallets read only it).
    return lib.getCredentialIssuerMetadataDraft11(metadata as unknown as IssuerMetadataResult['credentialIssuer']) as Record<string, unknown>;
  }

  /** RFC 8414 metadata: fixed per issuer URL, so serialized once; the wallet record is read to answer 404 for a deleted wallet. */
  private readonly asDocuments = memo((issuer: string) => serialized(authorizationServerMetadata(issuer)), 1000);

  async authorizationServerMetadataDocument(scope: TenantScope, issuer: string): Promise<MetadataDocument> {
    await this.walletState(scope);
    return this.asDocuments(issuer);
  }

  async authorizationServerMetadata(scope: TenantScope, issuer: string): Promise<Record<string, unknown>> {
    return JSON.parse((await this.authorizationServerMetadataDocument(scope, issuer)).body) as Record<string, unknown>;
  }

  /** The offer by reference: served while its code can still be redeemed, unguessable (256-bit id). */
  async offer(scope: TenantScope, ref: string): Promise<Record<string, unknown>> {
    const item = await this.deps.store.get(oid4vciKeys.offerRef(scope, ref));
    const ex = item ? await this.exchange(scope, item.exchange_id as string) : null;
    if (!item || !ex || ex.state !== 'offer' || this.now().getTime() > ex.code_expires_at) throw new NotFoundError('No such credential offer, or it was already used', 'offer_not_found');
    return item.offer as Record<string, unknown>;
  }

  /** No read: the path's reference named this wallet (lib/tenancy/public-refs.ts), and a nonce costs nothing to mint (no KMS call). */
  async nonce(scope: TenantScope): Promise<{ c_nonce: string; c_nonce_expires_in: number }> {
    const { nonceKey } = await this.deps.secrets.of(scope.walletId);
    return { c_nonce: mintNonce(nonceKey, epoch(this.now()) + this.settings.cNonceTtlSeconds), c_nonce_expires_in: this.settings.cNonceTtlSeconds };
  }

  private async exchange(scope: TenantScope, id: string): Promise<ExchangeRecord | null> {
    const item = await this.deps.store.get(oid4vciKeys.exchange(scope, id), { consistent: true });
    return item ? exchangeFromItem(item) : null;
  }

  private transition(scope: TenantScope, ex: ExchangeRecord, to: ExchangeTransitionState, set: Record<string, unknown> = {}, extra: WriteOp[] = []) {
    return exchangeTransition(this.deps.events, scope, ex, to, this.now(), set, extra);
  }

  /** Token endpoint (OpenID4VCI 1.0 §6): the pre-authorized code (and tx_code) for a short-lived, exchange-bound access token. */
  async token(scope: TenantScope, issuer: string, request: ProtocolRequest, form: Record<string, string>): Promise<Record<string, unknown>> {
    refusePrivateDpopKey(request, false);
    const { callbacks, secrets } = await this.callbacks(scope, issuer);
    const as = new Oauth2AuthorizationServer({ callbacks });
    // Our own document (metadata.ts, checked by the library's schema in tests): not parsed again per request.
    const asMetadata = authorizationServerMetadata(issuer) as Parameters<Oauth2AuthorizationServer['createAuthorizationServerMetadata']>[0];
    const req = requestLike(request);
    const parsed = await mapped(() => as.parseAccessTokenRequest({ request: req, accessTokenRequest: form }));
    if (parsed.grant.grantType !== preAuthorizedCodeGrantIdentifier) throw invalid(Oauth2ErrorCodes.UnsupportedGrantType, 'Only the pre-authorized code grant is supported');
    const { preAuthorizedCode, txCode } = parsed.grant;
    const codeItem = await this.deps.store.get(oid4vciKeys.code(scope, preAuthorizedCode), { consistent: true });
    let ex = codeItem ? await this.exchange(scope, codeItem.exchange_id as string) : null;
    if (!codeItem || !ex || !sameSecret(ex.code, preAuthorizedCode)) throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Unknown or already used pre-authorized code');
    const now = this.now();
    ex = await settleExpired(this.deps, scope, ex, now);
    if (ex?.state === 'expired') throw invalid(Oauth2ErrorCodes.InvalidGrant, 'The pre-authorized code has expired');
    if (!ex || ex.state !== 'offer') throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Unknown or already used pre-authorized code');
    if (ex.pin !== null && txCode === undefined) throw invalid(Oauth2ErrorCodes.InvalidRequest, "Missing required 'tx_code' in request");

    // Everything else is checked first (the library: code, DPoP, expiry), so that a request failing for
    // another reason does not use up a PIN attempt; the PIN itself is compared only by countTxCode.
    // The library lets a DPoP proof's header and payload schema errors out bare, and the proof is the one
    // input this call reads by schema: such an error is invalid_dpop_proof (RFC 9449 §5), not invalid_request.
    const verified = await mapped(() =>
      as.verifyPreAuthorizedCodeAccessTokenRequest({
        authorizationServerMetadata: asMetadata,
        grant: parsed.grant as Parameters<Oauth2AuthorizationServer['verifyPreAuthorizedCodeAccessTokenRequest']>[0]['grant'],
        accessTokenRequest: parsed.accessTokenRequest,
        request: req,
        expectedPreAuthorizedCode: ex.code,
        expectedTxCode: ex.pin === null ? undefined : txCode,
        preAuthorizedCodeExpiresAt: new Date(ex.code_expires_at),
        now,
        dpop: parsed.dpop ? { jwt: parsed.dpop.jwt, allowedSigningAlgs: asMetadata.dpop_signing_alg_values_supported } : undefined,
      }),
      Oauth2ErrorCodes.InvalidDpopProof,
    );
    const dpopOps = parsed.dpop ? this.spendDpop(scope, parsed.dpop.jwt, null) : [];
    if (ex.pin !== null) await this.countTxCode(scope, ex, txCode!);
    const tokenId = `urn:uuid:${randomUUID()}`;
    const cNonce = mintNonce(secrets.nonceKey, epoch(now) + this.settings.cNonceTtlSeconds);
    const response = await mapped(() =>
      as.createAccessTokenResponse({
        audience: issuer,
        authorizationServer: issuer,
        expiresInSeconds: this.settings.accessTokenTtlSeconds,
        signer: { method: 'jwk', publicJwk: secrets.tokenKey.publicJwk as Jwk, alg: 'ES256' },
        subject: ex.exchange_id,
        now,
        dpop: verified.dpop ? { jwk: verified.dpop.jwk } : undefined,
        cNonce,
        cNonceExpiresIn: this.settings.cNonceTtlSeconds,
        // What the credential endpoint reads besides the exchange, so that it reads all three at once.
        additionalAccessTokenPayload: { jti: tokenId, [TOKEN_CLAIMS.configuration]: ex.supported_cred_id, [TOKEN_CLAIMS.issuerDid]: ex.issuer_id },
      }),
    );
    const tokenExpiresAt = now.getTime() + this.settings.accessTokenTtlSeconds * 1000;
    const { ops } = this.transition(scope, ex, 'redeemed', { token: tokenId, nonce: cNonce, token_expires_at: tokenExpiresAt }, [
      // Single use: the code's lookup goes with the redemption.
      { type: 'delete', key: oid4vciKeys.code(scope, preAuthorizedCode), condition: 'exists' },
      ...dpopOps,
    ]);
    await this.spend(ops, null, async () => {
      throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Unknown or already used pre-authorized code');
    });
    return response as unknown as Record<string, unknown>;
  }

  /**
   * Every tx_code guess is counted before it is compared (an atomic counter, conditional on the code
   * still being redeemable), so concurrent guesses cannot outrun the limit: only the first
   * `maxTxCodeAttempts` guesses are compared at all, and a wrong one that reaches the limit burns the
   * code (state `failed`, once).
   */
  private async countTxCode(scope: TenantScope, ex: ExchangeRecord, txCode: string): Promise<void> {
    const max = this.settings.maxTxCodeAttempts;
    let attempts: number;
    try {
      attempts = await this.deps.store.increment(oid4vciKeys.exchange(scope, ex.exchange_id), 'tx_code_attempts', { equals: { state: 'offer' } });
    } catch (e) {
      if (e instanceof ConditionFailedError || e instanceof WriteConflictError) throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Unknown or already used pre-authorized code');
      throw e;
    }
    if (attempts <= max && sameSecret(txCode, ex.pin!)) return;
    if (attempts >= max) {
      const { ops } = this.transition(scope, ex, 'failed', { failure_reason: 'tx_code_attempts_exhausted' }, [{ type: 'delete', key: oid4vciKeys.code(scope, ex.code) }]);
      await this.settle(ops);
      throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Invalid tx_code; no attempts are left and the pre-authorized code is no longer valid');
    }
    throw invalid(Oauth2ErrorCodes.InvalidGrant, `Invalid tx_code (${max - attempts} attempt(s) left)`);
  }

  /**
   * RFC 9449 §11.1: a DPoP proof is fresh (`iat` near now) and used once (its `jti` recorded until it
   * could no longer be fresh). At the token endpoint a bad proof is a 400; at a resource (`scheme`
   * given), a 401 with the DPoP challenge (§7.1).
   */
  private spendDpop(scope: TenantScope, jwt: string, scheme: string | null): WriteOp[] {
    const refuse = (description: string) => (scheme === null ? invalid(Oauth2ErrorCodes.InvalidDpopProof, description) : unauthorized('DPoP', Oauth2ErrorCodes.InvalidDpopProof, description));
    // The library has verified the proof (its schema requires `iat` and `jti`); what it leaves to us is time and reuse.
    const payload = decodeJwt({ jwt }).payload as { iat: number; jti: string };
    const now = epoch(this.now());
    if (Math.abs(now - payload.iat) > this.settings.dpopWindowSeconds) throw refuse('The DPoP proof is not fresh (iat)');
    if (payload.jti.length < 8 || payload.jti.length > 256) throw refuse('The DPoP proof needs a jti of 8 to 256 characters');
    return [{ type: 'put', item: { ...oid4vciKeys.used(scope, 'dpop', payload.jti), ttl: now + 2 * this.settings.dpopWindowSeconds + 60 }, condition: 'not_exists' }];
  }

  /**
   * A transaction cancelled by a conflict may have had no winner (DynamoDB cancels both sides): try
   * again a few times before deciding anything. The operations are conditional, so a retry after a
   * real winner fails its condition instead of applying twice.
   */
  private writeRetryingConflicts(ops: WriteOp[]): Promise<void> {
    return retryingConflicts(() => this.deps.store.write(ops));
  }

  /** A state change that must happen once (burning a code, failing an exchange): a lost condition means it already did. */
  private async settle(ops: WriteOp[]): Promise<void> {
    await this.writeRetryingConflicts(ops).catch((e) => {
      if (!(e instanceof ConditionFailedError)) throw e;
    });
  }

  /**
   * Writes spends and their state change. When a spend's condition fails, the one-time value was used
   * already: the error says which. When the state's condition fails, or a concurrent transaction on
   * the same items won, `lost` decides the answer from what is stored now — the same answer the loser
   * of a race gets as a request that comes second. `lost` returning means: done already (idempotent).
   */
  private async spend(ops: WriteOp[], scheme: string | null, lost: () => Promise<void>, statusOps: readonly WriteOp[] = []): Promise<void> {
    try {
      await this.writeRetryingConflicts(ops);
    } catch (e) {
      if (e instanceof WriteConflictError) return lost();
      if (!(e instanceof ConditionFailedError)) throw e;
      // Only a status-list definition deleted while this request was signing (nothing else failed): nothing was
      // spent, so the same request may be sent again. A lost race for the exchange is answered below as usual.
      const failed = e.failedIndexes.map((i) => ops[i]!);
      if (failed.length > 0 && failed.every((op) => op.type === 'check' && statusOps.includes(op))) throw statusChanged();
      const used = e.failedIndexes.map((i) => ops[i]).find((op) => op && op.type === 'put' && String(op.item.SK).startsWith(SK.used));
      if (used && used.type === 'put') {
        if (String(used.item.SK).includes('dpop#')) {
          throw scheme === null ? invalid(Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof was already used') : unauthorized('DPoP', Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof was already used');
        }
        throw invalid('invalid_nonce', 'The c_nonce was already used; get a fresh one from the nonce endpoint');
      }
      return lost();
    }
  }

  /**
   * The access token of a resource request, verified (signature, `aud`, expiry, DPoP binding) and tied
   * to its exchange. The token (signed by this issuer) names the exchange, its configuration and its
   * issuer DID, so they are read at once, together with `also` (the spent-nonce records to check).
   */
  private async authorize(scope: TenantScope, issuer: string, request: ProtocolRequest, forIssuance: boolean, also: readonly ItemKey[] = []) {
    refusePrivateDpopKey(request, true);
    const { callbacks, secrets } = await this.callbacks(scope, issuer);
    const rs = new Oauth2ResourceServer({ callbacks });
    const asMetadata = { ...authorizationServerMetadata(issuer), jwks_uri: issuerEndpoints(issuer).jwks } as Parameters<Oauth2ResourceServer['verifyResourceRequest']>[0]['authorizationServers'][number];
    const result = await mapped(() => rs.verifyResourceRequest({ request: requestLike(request), resourceServer: issuer, authorizationServers: [asMetadata], now: this.now() }));
    const scheme = result.scheme;
    const dpopOps = result.dpop ? this.spendDpop(scope, request.headers.dpop ?? '', scheme) : [];
    const tokenPayload = result.tokenPayload as Record<string, unknown>;
    const [sub, jti, configId, issuerDid] = [tokenPayload.sub, tokenPayload.jti, tokenPayload[TOKEN_CLAIMS.configuration], tokenPayload[TOKEN_CLAIMS.issuerDid]];
    if (typeof sub !== 'string' || typeof jti !== 'string' || typeof configId !== 'string' || typeof issuerDid !== 'string') throw notForThisIssuer(scheme);
    const dpopKey = dpopOps[0]?.type === 'put' ? { PK: dpopOps[0].item.PK, SK: dpopOps[0].item.SK } : null;
    // One round trip: the exchange, its configuration and issuer DID, the DPoP proof's and the nonces' spent records.
    const wanted: (ItemKey | null)[] = [
      oid4vciKeys.exchange(scope, sub),
      forIssuance ? oid4vciKeys.supported(scope, configId) : null,
      forIssuance ? keys.did(scope, qualify(issuerDid)) : null,
      dpopKey,
      ...also,
    ];
    const present = wanted.filter((k): k is ItemKey => k !== null);
    const got = await this.deps.store.getMany(present, { consistent: true });
    const byKey = new Map(present.map((k, i) => [`${k.PK}|${k.SK}`, got[i]]));
    const [exItem, record, didItem, dpopUsed, ...alsoItems] = wanted.map((k) => (k ? byKey.get(`${k.PK}|${k.SK}`) : undefined));
    const ex = exItem ? exchangeFromItem(exItem) : null;
    if (!ex || ex.token !== jti || ex.supported_cred_id !== configId || ex.issuer_id !== issuerDid) throw notForThisIssuer(scheme);
    if (dpopUsed) throw unauthorized('DPoP', Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof was already used');
    return { ex, scheme, record: record ?? null, didItem: didItem ?? null, alsoFound: alsoItems.map((i) => i !== undefined), dpopOps, callbacks, secrets };
  }

  /** Credential endpoint (1.0 §8, draft 13 `proof`, draft 11 `format` + `proof`): one credential per proof, each with its own salts. */
  async credential(scope: TenantScope, issuer: string, request: ProtocolRequest, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    // The nonces the proofs name, read (spent or not) with the exchange: a replay costs no signature.
    const jwts = proofJwts(body).filter((j): j is string => typeof j === 'string' && COMPACT_JWS.test(j));
    const claimedNonces = [...new Set(jwts.map((j) => proofClaims(j)?.nonce ?? null).filter((n): n is string => n !== null))].slice(0, BATCH_SIZE);
    const { ex, scheme, record, didItem, alsoFound, dpopOps, callbacks, secrets } = await this.authorize(
      scope,
      issuer,
      request,
      true,
      claimedNonces.map((n) => oid4vciKeys.used(scope, 'nonce', n)),
    );
    if (alsoFound.some(Boolean)) throw invalid('invalid_nonce', 'The c_nonce was already used; get a fresh one from the nonce endpoint');
    if (ex.state !== 'redeemed') throw unauthorized(scheme, 'invalid_token', `Credentials were already issued with this access token (exchange ${ex.state})`);
    if (!record) await this.deny(scope, ex, 'configuration_deleted', 'The credential configuration of this offer no longer exists');
    const did = didItem ? didFromItem(didItem) : null;
    if (!did || did.deactivated_at) await this.deny(scope, ex, 'issuer_did_unavailable', 'The issuer DID of this offer no longer exists or was deactivated');
    const config = configurationFromItem(record!);
    const issuerMetadata = this.metadataOf(issuer, config) ?? (await this.deny(scope, ex, 'configuration_invalid', 'The credential configuration of this offer cannot be issued (wallets would reject its metadata)'));
    const lib = new Openid4vciIssuer({ callbacks });
    precheckCredentialRequest(body, config);
    const parsed = await mapped(() => lib.parseCredentialRequest({ issuerMetadata, credentialRequest: body }));
    this.checkRequestedConfiguration(parsed, body, config);
    const proofs = parsed.proofs?.jwt ?? [];
    if (proofs.length === 0) throw invalid('invalid_proof', 'A jwt proof of possession of the holder key is required');
    if (proofs.length > BATCH_SIZE) throw invalid('invalid_credential_request', `At most ${BATCH_SIZE} proofs per request (batch_credential_issuance)`);

    const now = this.now();
    const nonces = new Set<string>();
    const holders: HolderBinding[] = [];
    const thumbprints = new Set<string>();
    for (const jwt of proofs) {
      const claims = proofClaims(jwt);
      if (!claims) throw invalid('invalid_proof', 'The proof is not a JWT');
      // Appendix F.4: the header must not contain a private key.
      const exposed = privateJwkMembers(headerJwk(jwt));
      if (exposed.length > 0) throw invalid('invalid_proof', `The proof's jwk header holds private key members (${exposed.join(', ')}); send the public key only`);
      const { nonce } = claims;
      // §8.3.1.2: a proof without a c_nonce is invalid_proof; one with a wrong c_nonce, invalid_nonce.
      if (!nonce) throw invalid('invalid_proof', 'The proof carries no nonce; get a c_nonce from the nonce endpoint');
      const exp = nonceExpiry(secrets.nonceKey, nonce);
      if (exp === null) throw invalid('invalid_nonce', 'The proof carries no c_nonce of this issuer; get one from the nonce endpoint');
      // The instant the library is given too: past it, the nonce is expired, not the proof invalid.
      if (exp * 1000 < now.getTime()) throw invalid('invalid_nonce', 'The c_nonce has expired; get a fresh one from the nonce endpoint');
      checkProofTime(claims.iat, epoch(now), this.settings.cNonceTtlSeconds);
      const verified = await mapped(() => lib.verifyCredentialRequestJwtProof({ jwt, expectedNonce: nonce, nonceExpiresAt: new Date(exp * 1000), issuerMetadata, now }));
      nonces.add(nonce);
      const signer = verified.signer as { method: string; publicJwk: Jwk; didUrl?: string };
      const holder: HolderBinding = { jwk: publicOnly(signer.publicJwk), ...(signer.method === 'did' && signer.didUrl ? { did: signer.didUrl.split('#')[0]!, didUrl: signer.didUrl } : {}) };
      checkBindingMethod(config, holder);
      // §8.3: each key binds at most one credential.
      const thumbprint = await calculateJwkThumbprint({ jwk: holder.jwk as Jwk, hashAlgorithm: HashAlgorithm.Sha256, hashCallback: callbacks.hash });
      if (thumbprints.has(thumbprint)) throw invalid('invalid_proof', 'Each proof must be for a different key');
      thumbprints.add(thumbprint);
      holders.push(holder);
    }

    const signer = issuerSigner(this.deps.keyManager, scope, { ref: did!.key_ref, alg: did!.alg }, ex.verification_method);
    // Reserved after the replay checks above: a request that loses a race later leaves only unused indexes.
    let status: StatusAllocation | null = null;
    try {
      status = this.deps.status ? await this.deps.status.allocate(scope, config, ex.exchange_id, holders.length, did!.qualified) : null;
    } catch (e) {
      if (e instanceof StatusIssuerMismatchError) await this.deny(scope, ex, 'status_list_issuer_mismatch', e.message);
      retryable(e);
    }
    const credentials: string[] = [];
    for (const [i, holder] of holders.entries()) {
      credentials.push(await issueCredential({ config, subject: ex.credential_subject, issuerDid: did!.qualified, signer, holder, now, validitySeconds: this.settings.credentialValiditySeconds, status: status?.claims[i] ?? null }));
    }

    const notificationId = randomUUID();
    const singular = !('proofs' in body);
    const draftNonce = singular ? { cNonce: mintNonce(secrets.nonceKey, epoch(now) + this.settings.cNonceTtlSeconds), cNonceExpiresInSeconds: this.settings.cNonceTtlSeconds } : {};
    // Built before the commit: once the exchange says `issued`, nothing may fail before the answer.
    const response = await mapped(() =>
      lib.createCredentialResponse({
        credentialRequest: parsed,
        ...(singular ? { credential: credentials[0] } : { credentials: credentials.map((credential) => ({ credential })) }),
        notificationId,
        ...draftNonce,
      }),
    );
    const spentNonces: WriteOp[] = [...nonces].map((n) => ({ type: 'put', item: { ...oid4vciKeys.used(scope, 'nonce', n), ttl: (nonceExpiry(secrets.nonceKey, n) ?? epoch(now)) + 60 }, condition: 'not_exists' }));
    const statusOps = status?.ops ?? [];
    const { ops } = this.transition(
      scope,
      ex,
      'issued',
      { notification_id: notificationId, issued_count: credentials.length, nonce: [...nonces][0] ?? ex.nonce },
      [...spentNonces, ...dpopOps, ...statusOps],
    );
    await this.spend(ops, scheme, async () => {
      throw unauthorized(scheme, 'invalid_token', 'Credentials were already issued with this access token');
    }, statusOps);
    return response as Record<string, unknown>;
  }

  /** §8.3.1.2 credential_request_denied: what the offer needs is gone; the exchange fails (once) and says why. */
  private async deny(scope: TenantScope, ex: ExchangeRecord, reason: string, description: string): Promise<never> {
    await this.settle(this.transition(scope, ex, 'failed', { failure_reason: reason }).ops);
    throw invalid('credential_request_denied', description);
  }

  /**
   * The configuration as the library sees it, or null when the library rejects it (then it is neither
   * listed in the metadata nor issued: the credential endpoint denies it). Supported-credential records
   * never change (only deleted), so the result is kept per instance.
   */
  private readonly metadata = memo(
    ({ issuer, config }: { issuer: string; config: IssuableConfiguration }) => this.buildMetadataResult(issuer, config),
    1000,
    ({ issuer, config }) => `${issuer}|${config.supportedCredId}`,
  );

  private metadataOf(issuer: string, config: IssuableConfiguration): IssuerMetadataResult | null {
    return this.metadata({ issuer, config });
  }

  private buildMetadataResult(issuer: string, config: IssuableConfiguration): IssuerMetadataResult | null {
    const lib = new Openid4vciIssuer({ callbacks: oid4vcCallbacks() });
    let credentialIssuer: IssuerMetadataResult['credentialIssuer'];
    try {
      // The same pipeline as the published document (the draft-11 view), so what is listed is what is issued.
      credentialIssuer = lib.createCredentialIssuerMetadata(lib.getCredentialIssuerMetadataDraft11(credentialIssuerMetadata(issuer, null, [config]) as unknown as IssuerMetadataResult['credentialIssuer']) as IssuerMetadataResult['credentialIssuer']);
    } catch {
      return null;
    }
    const known = lib.getKnownCredentialConfigurationsSupported(credentialIssuer);
    if (!known[config.id]) return null;
    return {
      originalDraftVersion: Openid4vciVersion.V1,
      credentialIssuer,
      authorizationServers: [authorizationServerMetadata(issuer) as unknown as IssuerMetadataResult['authorizationServers'][number]],
      knownCredentialConfigurations: known,
    } as IssuerMetadataResult;
  }

  /** The request must ask for what this exchange offers: by configuration id (1.0), identifier, or format (drafts). */
  private checkRequestedConfiguration(parsed: ReturnType<Openid4vciIssuer['parseCredentialRequest']>, body: Record<string, unknown>, config: IssuableConfiguration): void {
    const named = parsed.credentialConfigurationId;
    if (named !== undefined) {
      if (named !== config.id) throw invalid('unknown_credential_configuration', `This access token is for credential configuration ${config.id}`);
      return;
    }
    const format = parsed.format as { format?: string; vct?: string; credential_definition?: { type?: string[] }; types?: string[] } | undefined;
    const requested = format?.format ?? (typeof body.format === 'string' ? body.format : undefined);
    if (!requested) throw invalid('invalid_credential_request', 'Name the credential: credential_configuration_id (1.0), or format with vct / credential_definition (drafts)');
    const formatMatches = requested === config.format || (isSdJwt(requested as SupportedFormat) && isSdJwt(config.format));
    const types = format?.credential_definition?.type ?? format?.types ?? (Array.isArray(body.types) ? (body.types as string[]) : undefined);
    const typeMatches = config.format === 'jwt_vc_json' ? !types || (config.types ?? []).every((t) => types.includes(t)) : (format?.vct ?? body.vct) === config.vct;
    if (!formatMatches || !typeMatches) throw invalid('unknown_credential_configuration', `This access token is for credential configuration ${config.id}`);
  }

  /** Notification endpoint (1.0 §11): the wallet tells what became of the credential. */
  async notification(scope: TenantScope, issuer: string, request: ProtocolRequest, body: { notification_id: string; event: 'credential_accepted' | 'credential_deleted' | 'credential_failure'; event_description?: string | undefined }): Promise<void> {
    const { ex, scheme, dpopOps } = await this.authorize(scope, issuer, request, false);
    if (!ex.notification_id || body.notification_id !== ex.notification_id) throw invalid('invalid_notification_id', 'Unknown notification_id');
    const to: ExchangeTransitionState = body.event === 'credential_accepted' ? 'accepted' : body.event === 'credential_deleted' ? 'deleted' : 'failed';
    if (ex.state === to) return; // the same notification again
    if (ex.state !== 'issued') throw invalid('invalid_notification_request', `The exchange is already ${ex.state}`);
    const set = to === 'failed' ? { failure_reason: `wallet: ${(body.event_description ?? 'credential_failure').slice(0, 500)}` } : {};
    const { ops } = this.transition(scope, ex, to, set, dpopOps);
    await this.spend(ops, scheme, async () => {
      const now = await this.exchange(scope, ex.exchange_id);
      if (now?.state === to) return; // a concurrent copy of the same notification won
      throw invalid('invalid_notification_request', `The exchange is already ${now?.state ?? 'gone'}`);
    });
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(lookupHash(a));
  const y = Buffer.from(lookupHash(b));
  return timingSafeEqual(x, y);
}

/** The proof JWTs of a request in any of its shapes (1.0 `proofs.jwt`, drafts' `proof.jwt`). */
function proofJwts(body: Record<string, unknown>): unknown[] {
  const proofs = body.proofs as { jwt?: unknown } | undefined;
  if (proofs && typeof proofs === 'object' && Array.isArray(proofs.jwt)) return proofs.jwt;
  const proof = body.proof as { jwt?: unknown } | undefined;
  return proof && typeof proof === 'object' && proof.jwt !== undefined ? [proof.jwt] : [];
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * What the library would refuse with a generic invalid_credential_request gets the specific code
 * §8.3.1.2 names: an unknown configuration, a proof that is not a signed JWT (`alg: none` has no signature).
 */
function precheckCredentialRequest(body: Record<string, unknown>, config: IssuableConfiguration): void {
  const id = body.credential_configuration_id;
  if (typeof id === 'string' && id !== config.id) throw invalid('unknown_credential_configuration', `This access token is for credential configuration ${config.id}`);
  // Identifiers come from a token response's authorization_details, which this issuer never sends.
  if (body.credential_identifier !== undefined) throw invalid('unknown_credential_identifier', 'This issuer hands out no credential identifiers; name the credential_configuration_id');
  // §8.2: an encrypted response was asked for; this issuer advertises no credential_response_encryption.
  if (body.credential_response_encryption !== undefined) throw invalid('invalid_encryption_parameters', 'This issuer does not encrypt credential responses');
  for (const jwt of proofJwts(body)) {
    if (typeof jwt !== 'string' || !COMPACT_JWS.test(jwt)) throw invalid('invalid_proof', 'Each proof must be a signed compact JWT');
  }
}

/** Wallets' clocks may be off (1.0 §13.8 leaves the tolerance to the issuer): five minutes either way. */
const CLOCK_SKEW_SECONDS = 300;

/** A proof's payload claims this issuer reads itself (the library reads the rest); null when it is not a JWT. */
function proofClaims(jwt: string): { nonce: string | null; iat: unknown } | null {
  try {
    const payload = decodeJwt({ jwt }).payload as Record<string, unknown>;
    return { nonce: typeof payload.nonce === 'string' ? payload.nonce : null, iat: payload.iat };
  } catch {
    return null;
  }
}

/** Appendix F.1: `iat` is required; a proof made before its nonce could exist, or in the future, is refused. */
function checkProofTime(iat: unknown, now: number, nonceTtlSeconds: number): void {
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalid('invalid_proof', 'The proof needs an iat');
  if (iat > now + CLOCK_SKEW_SECONDS || iat < now - nonceTtlSeconds - CLOCK_SKEW_SECONDS) throw invalid('invalid_proof', 'The proof was not made now (iat)');
}

/** The configuration's binding methods (or the defaults) must include what the proof used. */
function checkBindingMethod(config: IssuableConfiguration, holder: HolderBinding): void {
  const allowed = config.bindingMethods ?? DEFAULT_BINDING_METHODS;
  const used = holder.did ? `did:${holder.did.split(':')[1]}` : 'jwk';
  if (!allowed.includes(used)) throw invalid('invalid_proof', `This credential binds to ${allowed.join(', ')}, not ${used}`);
}

function publicOnly(jwk: Jwk): Record<string, unknown> {
  const { kty, crv, x, y } = jwk as Record<string, unknown>;
  return { kty, crv, x, ...(y ? { y } : {}) };
}
