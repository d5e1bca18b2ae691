import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  decodeJwt,
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
import { NotFoundError, ProtocolError } from '../../http/errors';
import type { KeyManager } from '../../keys/port';
import { issuerSigner } from '../../keys/signer';
import { oid4vcCallbacks, type CallbackKeys } from '../../oid4vc/callbacks';
import { keys, type TenantScope } from '../../store/keys';
import { ConditionFailedError, type Item, type ItemStore, type WriteOp } from '../../store/port';
import { issuableConfiguration, supportedFromItem } from '../supported';
import { issuerUrl, oid4vciKeys, SK, type ExchangeRecord, type ExchangeState, type IssuableConfiguration } from '../records';
import { codeHash, exchangeEventData, exchangeFromItem } from '../exchanges';
import { issueCredential, type HolderBinding, type StatusEntrySource } from './formats';
import { es256Sign, mintNonce, nonceExpiry, type IssuerSecretSource, type IssuerSecrets } from './issuer-secrets';
import { authorizationServerMetadata, BATCH_SIZE, credentialIssuerMetadata, issuerEndpoints } from './metadata';

export interface IssuerProtocolSettings {
  /** Access-token lifetime (short: one credential request and the notification follow at once). */
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

/** Private claims of our access tokens (RFC 9068 allows them): the exchange's configuration and issuer DID. */
const TOKEN_CLAIMS = { configuration: 'scd', issuerDid: 'idid' } as const;

const notForThisIssuer = (scheme: string) => new ProtocolError(401, 'invalid_token', 'The access token is not valid for this issuer', { 'www-authenticate': `${scheme} error="invalid_token"` });

const sha256b64 = (v: string) => createHash('sha256').update(v).digest('base64url');
const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

const invalid = (error: string, description: string, status = 400) => new ProtocolError(status, error, description);

/** Library errors carry protocol data: turn them into our ProtocolError (the only thing that speaks to the caller). */
export function toProtocolError(e: unknown): unknown {
  if (e instanceof Oauth2ResourceUnauthorizedError) {
    const challenge = e.wwwAuthenticateHeaders[0];
    return new ProtocolError(401, (challenge?.error as string | undefined) ?? 'invalid_token', (challenge?.error_description as string | undefined) ?? 'The access token is missing or invalid', {
      // Header values must be visible ASCII: the library's descriptions may carry newlines.
      'www-authenticate': e.toHeaderValue().replace(/[\r\n\t]+/g, ' ').replace(/[^\x20-\x7e]/g, ''),
    });
  }
  if (e instanceof Oauth2ServerErrorResponseError) {
    return new ProtocolError(e.status, e.errorResponse.error, e.errorResponse.error_description ?? e.errorResponse.error);
  }
  if (e instanceof LibraryValidationError) return invalid(Oauth2ErrorCodes.InvalidRequest, e.message.split('\n')[0]!);
  return e;
}

async function mapped<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toProtocolError(e);
  }
}

function requestLike(r: ProtocolRequest): RequestLike {
  return { method: r.method as RequestLike['method'], url: r.url, headers: new Headers(r.headers) };
}

/**
 * The public side of a wallet's credential issuer (OpenID4VCI 1.0, pre-authorized code flow), built
 * on `@openid4vc/openid4vci` and `@openid4vc/oauth2` with crypto injected (lib/oid4vc/callbacks.ts).
 * Every call runs in the wallet's session: codes, tokens and exchanges are found only in its partition.
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
    const tokenKey: CallbackKeys['tokenKey'] = { privateKey, publicJwk: publicJwk as Jwk, jwksUri: issuerEndpoints(issuer).jwks, sign: (d) => es256Sign(privateKey, d) };
    return { callbacks: oid4vcCallbacks({ tokenKey }), secrets };
  }

  private async walletLabel(scope: TenantScope): Promise<string | null> {
    const wallet = await this.deps.store.get(keys.wallet(scope));
    if (!wallet) throw new NotFoundError('No such credential issuer', 'issuer_not_found');
    return typeof wallet.label === 'string' && wallet.label ? wallet.label : null;
  }

  private async configurations(scope: TenantScope): Promise<IssuableConfiguration[]> {
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: SK.supported });
    return items.map((i) => issuableConfiguration(supportedFromItem(i)));
  }

  async issuerMetadata(scope: TenantScope, baseUrl: string): Promise<Record<string, unknown>> {
    const label = await this.walletLabel(scope);
    const metadata = credentialIssuerMetadata(issuerUrl(baseUrl, scope.walletId), label, await this.configurations(scope));
    // One document for both generations, as the library builds it: the 1.0 `credential_configurations_supported`
    // plus draft 11's `credentials_supported` array (1.0 wallets ignore it; draft-11 wallets read only it).
    return new Openid4vciIssuer({ callbacks: oid4vcCallbacks() }).getCredentialIssuerMetadataDraft11(metadata as unknown as IssuerMetadataResult['credentialIssuer']) as Record<string, unknown>;
  }

  async authorizationServerMetadata(scope: TenantScope, baseUrl: string): Promise<Record<string, unknown>> {
    await this.walletLabel(scope);
    return authorizationServerMetadata(issuerUrl(baseUrl, scope.walletId));
  }

  /** The offer by reference: served while its code can still be redeemed, unguessable (256-bit id). */
  async offer(scope: TenantScope, ref: string): Promise<Record<string, unknown>> {
    const item = await this.deps.store.get(oid4vciKeys.offerRef(scope, ref));
    const ex = item ? await this.exchange(scope, item.exchange_id as string) : null;
    if (!item || !ex || ex.state !== 'offer' || this.now().getTime() > ex.code_expires_at) throw new NotFoundError('No such credential offer, or it was already used', 'offer_not_found');
    return item.offer as Record<string, unknown>;
  }

  async nonce(scope: TenantScope): Promise<{ c_nonce: string; c_nonce_expires_in: number }> {
    await this.walletLabel(scope);
    const { nonceKey } = await this.deps.secrets.of(scope.walletId);
    return { c_nonce: mintNonce(nonceKey, epoch(this.now()) + this.settings.cNonceTtlSeconds), c_nonce_expires_in: this.settings.cNonceTtlSeconds };
  }

  private async exchange(scope: TenantScope, id: string): Promise<ExchangeRecord | null> {
    const item = await this.deps.store.get(oid4vciKeys.exchange(scope, id), { consistent: true });
    return item ? exchangeFromItem(item) : null;
  }

  /** A state change and its event in one transaction, conditional on the state it leaves. */
  private transition(scope: TenantScope, ex: ExchangeRecord, from: ExchangeState, to: ExchangeState, set: Record<string, unknown> = {}, extra: WriteOp[] = []): { ops: WriteOp[]; next: ExchangeRecord } {
    const updated_at = this.now().toISOString();
    const next = { ...ex, ...set, state: to, updated_at } as ExchangeRecord;
    const type = `oid4vci.exchange.${to}` as const;
    const data = { ...exchangeEventData(next), ...(to === 'failed' ? { failure_reason: next.failure_reason ?? null } : {}), ...(to === 'issued' ? { issued_count: next.issued_count ?? 0 } : {}) };
    return {
      next,
      ops: [
        { type: 'update', key: oid4vciKeys.exchange(scope, ex.exchange_id), set: { ...set, state: to, updated_at }, condition: { equals: { state: from } } },
        ...extra,
        this.deps.events.stage(scope, type as Parameters<EventPublisher['stage']>[1], data).op,
      ],
    };
  }

  /** Marks an unredeemed, expired exchange `expired` (once, whoever notices first). */
  private async expire(scope: TenantScope, ex: ExchangeRecord): Promise<void> {
    try {
      await this.deps.store.write(this.transition(scope, ex, 'offer', 'expired').ops);
    } catch (e) {
      if (!(e instanceof ConditionFailedError)) throw e;
    }
  }

  /** Token endpoint (OpenID4VCI 1.0 §6): the pre-authorized code (and tx_code) for a short-lived, exchange-bound access token. */
  async token(scope: TenantScope, baseUrl: string, request: ProtocolRequest, form: Record<string, string>): Promise<Record<string, unknown>> {
    const issuer = issuerUrl(baseUrl, scope.walletId);
    const { callbacks, secrets } = await this.callbacks(scope, issuer);
    const as = new Oauth2AuthorizationServer({ callbacks });
    const asMetadata = as.createAuthorizationServerMetadata(authorizationServerMetadata(issuer) as Parameters<Oauth2AuthorizationServer['createAuthorizationServerMetadata']>[0]);
    const req = requestLike(request);
    const parsed = await mapped(() => as.parseAccessTokenRequest({ request: req, accessTokenRequest: form }));
    if (parsed.grant.grantType !== preAuthorizedCodeGrantIdentifier) throw invalid(Oauth2ErrorCodes.UnsupportedGrantType, 'Only the pre-authorized code grant is supported');
    const { preAuthorizedCode, txCode } = parsed.grant;
    const codeItem = await this.deps.store.get(oid4vciKeys.code(scope, codeHash(preAuthorizedCode)), { consistent: true });
    const ex = codeItem ? await this.exchange(scope, codeItem.exchange_id as string) : null;
    if (!codeItem || !ex || ex.code !== preAuthorizedCode) throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Unknown or already used pre-authorized code');
    const now = this.now();
    if (ex.state === 'offer' && now.getTime() > ex.code_expires_at) {
      await this.expire(scope, ex);
      throw invalid(Oauth2ErrorCodes.InvalidGrant, 'The pre-authorized code has expired');
    }
    if (ex.state !== 'offer') throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Unknown or already used pre-authorized code');
    if (ex.pin !== null && txCode !== undefined && !sameSecret(txCode, ex.pin)) await this.wrongTxCode(scope, ex);

    const verified = await mapped(() =>
      as.verifyPreAuthorizedCodeAccessTokenRequest({
        authorizationServerMetadata: asMetadata,
        grant: parsed.grant as Parameters<Oauth2AuthorizationServer['verifyPreAuthorizedCodeAccessTokenRequest']>[0]['grant'],
        accessTokenRequest: parsed.accessTokenRequest,
        request: req,
        expectedPreAuthorizedCode: ex.code,
        expectedTxCode: ex.pin ?? undefined,
        preAuthorizedCodeExpiresAt: new Date(ex.code_expires_at),
        now,
        dpop: parsed.dpop ? { jwt: parsed.dpop.jwt, allowedSigningAlgs: asMetadata.dpop_signing_alg_values_supported } : undefined,
      }),
    );
    const dpopOps = parsed.dpop ? this.spendDpop(scope, parsed.dpop.jwt) : [];
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
    const { ops } = this.transition(scope, ex, 'offer', 'redeemed', { token: tokenId, nonce: cNonce }, [
      // Single use: the code's lookup goes with the redemption.
      { type: 'delete', key: oid4vciKeys.code(scope, codeHash(preAuthorizedCode)), condition: 'exists' },
      ...dpopOps,
    ]);
    await this.spend(ops, 'invalid_grant', 'Unknown or already used pre-authorized code');
    return response as unknown as Record<string, unknown>;
  }

  /**
   * A wrong tx_code costs an attempt (an atomic counter: concurrent guesses each count); the last
   * allowed one burns the code (state `failed`, once).
   */
  private async wrongTxCode(scope: TenantScope, ex: ExchangeRecord): Promise<never> {
    const attempts = await this.deps.store.increment(oid4vciKeys.exchange(scope, ex.exchange_id), 'tx_code_attempts');
    if (attempts >= this.settings.maxTxCodeAttempts) {
      const { ops } = this.transition(scope, ex, 'offer', 'failed', { tx_code_attempts: attempts, failure_reason: 'tx_code_attempts_exhausted' }, [
        { type: 'delete', key: oid4vciKeys.code(scope, codeHash(ex.code)) },
      ]);
      await this.deps.store.write(ops).catch((e) => {
        if (!(e instanceof ConditionFailedError)) throw e;
      });
      throw invalid(Oauth2ErrorCodes.InvalidGrant, 'Invalid tx_code; no attempts are left and the pre-authorized code is no longer valid');
    }
    throw invalid(Oauth2ErrorCodes.InvalidGrant, `Invalid tx_code (${this.settings.maxTxCodeAttempts - attempts} attempt(s) left)`);
  }

  /** RFC 9449 §11.1: a DPoP proof is fresh (`iat` near now) and used once (its `jti` recorded until it could no longer be fresh). */
  private spendDpop(scope: TenantScope, jwt: string): WriteOp[] {
    let payload: Record<string, unknown>;
    try {
      payload = decodeJwt({ jwt }).payload as Record<string, unknown>;
    } catch {
      throw invalid(Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof is not a JWT');
    }
    const iat = payload.iat;
    const now = epoch(this.now());
    if (typeof iat !== 'number' || Math.abs(now - iat) > this.settings.dpopWindowSeconds) throw invalid(Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof is not fresh (iat)');
    if (typeof payload.jti !== 'string' || payload.jti.length < 8 || payload.jti.length > 256) throw invalid(Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof needs a jti');
    return [{ type: 'put', item: { ...oid4vciKeys.used(scope, 'dpop', sha256b64(payload.jti)), ttl: now + 2 * this.settings.dpopWindowSeconds + 60 }, condition: 'not_exists' }];
  }

  /** Writes spends and their state change; a failed condition means a replay (or a lost race): the protocol error given. */
  private async spend(ops: WriteOp[], error: string, description: string): Promise<void> {
    try {
      await this.deps.store.write(ops);
    } catch (e) {
      if (!(e instanceof ConditionFailedError)) throw e;
      const used = e.failedIndexes.map((i) => ops[i]).find((op) => op && op.type === 'put' && String(op.item.SK).startsWith(SK.used));
      if (used && used.type === 'put') {
        const sk = String(used.item.SK);
        if (sk.includes('dpop#')) throw invalid(Oauth2ErrorCodes.InvalidDpopProof, 'The DPoP proof was already used');
        throw invalid('invalid_nonce', 'The c_nonce was already used; get a fresh one from the nonce endpoint');
      }
      throw invalid(error, description);
    }
  }

  /** The access token of a resource request, verified (signature, `aud`, expiry, DPoP binding) and tied to its exchange. */
  private async authorize(scope: TenantScope, issuer: string, request: ProtocolRequest, forIssuance = true): Promise<{ ex: ExchangeRecord; record: Item | null; didItem: Item | null; dpopOps: WriteOp[]; callbacks: ReturnType<typeof oid4vcCallbacks>; secrets: IssuerSecrets }> {
    const { callbacks, secrets } = await this.callbacks(scope, issuer);
    const rs = new Oauth2ResourceServer({ callbacks });
    const asMetadata = { ...authorizationServerMetadata(issuer), jwks_uri: issuerEndpoints(issuer).jwks } as Parameters<Oauth2ResourceServer['verifyResourceRequest']>[0]['authorizationServers'][number];
    const result = await mapped(() => rs.verifyResourceRequest({ request: requestLike(request), resourceServer: issuer, authorizationServers: [asMetadata], now: this.now() }));
    const dpopOps = result.dpop ? this.spendDpop(scope, request.headers.dpop ?? '') : [];
    const tokenPayload = result.tokenPayload as Record<string, unknown>;
    const [sub, jti, configId, issuerDid] = [tokenPayload.sub, tokenPayload.jti, tokenPayload[TOKEN_CLAIMS.configuration], tokenPayload[TOKEN_CLAIMS.issuerDid]];
    if (typeof sub !== 'string' || typeof jti !== 'string' || typeof configId !== 'string' || typeof issuerDid !== 'string') throw notForThisIssuer(result.scheme);
    // The token (signed by this issuer) names all three, so they are read together.
    const [ex, record, didItem] = await Promise.all([
      this.exchange(scope, sub),
      forIssuance ? this.deps.store.get(oid4vciKeys.supported(scope, configId)) : undefined,
      forIssuance ? this.deps.store.get(keys.did(scope, qualify(issuerDid))) : undefined,
    ]);
    if (!ex || ex.token !== jti || ex.supported_cred_id !== configId || ex.issuer_id !== issuerDid) throw notForThisIssuer(result.scheme);
    return { ex, record: record ?? null, didItem: didItem ?? null, dpopOps, callbacks, secrets };
  }

  /** Credential endpoint (1.0 §8, draft 13 `proof`, draft 11 `format` + `proof`): one credential per proof, each with its own salts. */
  async credential(scope: TenantScope, baseUrl: string, request: ProtocolRequest, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const issuer = issuerUrl(baseUrl, scope.walletId);
    const { ex, record, didItem, dpopOps, callbacks, secrets } = await this.authorize(scope, issuer, request);
    if (ex.state !== 'redeemed') await this.refuseSpentToken(scope, ex, body);
    if (!record) throw invalid('invalid_credential_request', 'The credential configuration of this offer no longer exists');
    const config = issuableConfiguration(supportedFromItem(record));
    const issuerMetadata = this.issuerMetadataResult(issuer, config);
    const lib = new Openid4vciIssuer({ callbacks });
    precheckCredentialRequest(body, config);
    const parsed = await mapped(() => lib.parseCredentialRequest({ issuerMetadata, credentialRequest: body }));
    this.checkRequestedConfiguration(parsed, body, config);
    const proofs = parsed.proofs?.jwt ?? [];
    if (proofs.length === 0) throw invalid('invalid_proof', 'A jwt proof of possession of the holder key is required');
    if (proofs.length > BATCH_SIZE) throw invalid('invalid_credential_request', `At most ${BATCH_SIZE} proofs per request (batch_credential_issuance)`);
    if (!('proofs' in body) && proofs.length > 1) throw invalid('invalid_credential_request', 'Several proofs go in `proofs`');

    const now = this.now();
    const nonces = new Set<string>();
    const holders: HolderBinding[] = [];
    for (const jwt of proofs) {
      const nonce = proofNonce(jwt);
      // §8.3.1.2: a proof without a c_nonce is invalid_proof; one with a wrong c_nonce, invalid_nonce.
      if (!nonce) throw invalid('invalid_proof', 'The proof carries no nonce; get a c_nonce from the nonce endpoint');
      const exp = nonceExpiry(secrets.nonceKey, nonce);
      if (exp === null) throw invalid('invalid_nonce', 'The proof carries no c_nonce of this issuer; get one from the nonce endpoint');
      if (exp < epoch(now)) throw invalid('invalid_nonce', 'The c_nonce has expired; get a fresh one from the nonce endpoint');
      checkProofTime(jwt, epoch(now), this.settings.cNonceTtlSeconds);
      const verified = await mapped(() => lib.verifyCredentialRequestJwtProof({ jwt, expectedNonce: nonce, nonceExpiresAt: new Date(exp * 1000), issuerMetadata, now }));
      nonces.add(nonce);
      const signer = verified.signer as { method: string; publicJwk: Jwk; didUrl?: string };
      holders.push({ jwk: publicOnly(signer.publicJwk), ...(signer.method === 'did' && signer.didUrl ? { did: signer.didUrl.split('#')[0]!, didUrl: signer.didUrl } : {}) });
    }

    if (!didItem) throw invalid('invalid_credential_request', 'The issuer DID of this offer no longer exists in the wallet');
    const did = didFromItem(didItem);
    if (did.deactivated_at) throw invalid('invalid_credential_request', 'The issuer DID of this offer was deactivated');
    const signer = issuerSigner(this.deps.keyManager, scope, { ref: did.key_ref, alg: did.alg }, ex.verification_method);
    const credentials: string[] = [];
    for (const holder of holders) {
      const status = this.deps.status ? await this.deps.status.entryFor(config, ex.exchange_id) : null;
      credentials.push(await issueCredential({ config, subject: ex.credential_subject, issuerDid: did.qualified, signer, holder, now, validitySeconds: this.settings.credentialValiditySeconds, status }));
    }

    const notificationId = randomUUID();
    const spentNonces: WriteOp[] = [...nonces].map((n) => ({ type: 'put', item: { ...oid4vciKeys.used(scope, 'nonce', sha256b64(n)), ttl: (nonceExpiry(secrets.nonceKey, n) ?? epoch(now)) + 60 }, condition: 'not_exists' }));
    const { ops } = this.transition(scope, ex, 'redeemed', 'issued', { notification_id: notificationId, issued_count: credentials.length, nonce: [...nonces][0] ?? ex.nonce }, [...spentNonces, ...dpopOps]);
    await this.spend(ops, 'invalid_credential_request', 'Credentials were already requested with this access token');

    const singular = !('proofs' in body);
    const draftNonce = singular ? { cNonce: mintNonce(secrets.nonceKey, epoch(now) + this.settings.cNonceTtlSeconds), cNonceExpiresInSeconds: this.settings.cNonceTtlSeconds } : {};
    const response = await mapped(() =>
      lib.createCredentialResponse({
        credentialRequest: parsed,
        ...(singular ? { credential: credentials[0] } : { credentials: credentials.map((credential) => ({ credential })) }),
        notificationId,
        ...draftNonce,
      }),
    );
    return response as Record<string, unknown>;
  }

  /**
   * One credential request per access token: a replay (its nonce already spent) is invalid_nonce, a
   * new request with the same token is invalid_token.
   */
  private async refuseSpentToken(scope: TenantScope, ex: ExchangeRecord, body: Record<string, unknown>): Promise<never> {
    const jwts = proofJwts(body);
    const nonce = typeof jwts[0] === 'string' && COMPACT_JWS.test(jwts[0]) ? proofNonce(jwts[0]) : null;
    if (nonce && (await this.deps.store.get(oid4vciKeys.used(scope, 'nonce', sha256b64(nonce)), { consistent: true }))) {
      throw invalid('invalid_nonce', 'This c_nonce was already used; get a fresh one from the nonce endpoint');
    }
    throw new ProtocolError(401, 'invalid_token', `Credentials were already issued with this access token (exchange ${ex.state})`, { 'www-authenticate': 'Bearer error="invalid_token"' });
  }

  private issuerMetadataResult(issuer: string, config: IssuableConfiguration): IssuerMetadataResult {
    const credentialIssuer = credentialIssuerMetadata(issuer, null, [config]) as unknown as IssuerMetadataResult['credentialIssuer'];
    const lib = new Openid4vciIssuer({ callbacks: oid4vcCallbacks() });
    return {
      originalDraftVersion: Openid4vciVersion.V1,
      credentialIssuer,
      authorizationServers: [authorizationServerMetadata(issuer) as unknown as IssuerMetadataResult['authorizationServers'][number]],
      knownCredentialConfigurations: lib.getKnownCredentialConfigurationsSupported(credentialIssuer),
    } as IssuerMetadataResult;
  }

  /** The request must ask for what this exchange offers: by configuration id (1.0), identifier, or format (drafts). */
  private checkRequestedConfiguration(parsed: ReturnType<Openid4vciIssuer['parseCredentialRequest']>, body: Record<string, unknown>, config: IssuableConfiguration): void {
    const named = parsed.credentialConfigurationId ?? parsed.credentialIdentifier;
    if (named !== undefined) {
      if (named !== config.id) throw invalid('unknown_credential_configuration', `This access token is for credential configuration ${config.id}`);
      return;
    }
    const format = parsed.format as { format?: string; vct?: string; credential_definition?: { type?: string[] }; types?: string[] } | undefined;
    const requested = format?.format ?? (typeof body.format === 'string' ? body.format : undefined);
    if (!requested) throw invalid('invalid_credential_request', 'Name the credential: credential_configuration_id (1.0), or format with vct / credential_definition (drafts)');
    const sdJwt = (f: string) => f === 'vc+sd-jwt' || f === 'dc+sd-jwt';
    const formatMatches = requested === config.format || (sdJwt(requested) && sdJwt(config.format));
    const types = format?.credential_definition?.type ?? format?.types ?? (Array.isArray(body.types) ? (body.types as string[]) : undefined);
    const typeMatches = config.format === 'jwt_vc_json' ? !types || (config.types ?? []).every((t) => types.includes(t)) : (format?.vct ?? body.vct) === config.vct;
    if (!formatMatches || !typeMatches) throw invalid('unknown_credential_configuration', `This access token is for credential configuration ${config.id}`);
  }

  /** Notification endpoint (1.0 §11): the wallet tells what became of the credential. */
  async notification(scope: TenantScope, baseUrl: string, request: ProtocolRequest, body: { notification_id: string; event: 'credential_accepted' | 'credential_deleted' | 'credential_failure'; event_description?: string | undefined }): Promise<void> {
    const issuer = issuerUrl(baseUrl, scope.walletId);
    const { ex, dpopOps } = await this.authorize(scope, issuer, request, false);
    if (!ex.notification_id || body.notification_id !== ex.notification_id) throw invalid('invalid_notification_id', 'Unknown notification_id');
    const to: ExchangeState = body.event === 'credential_accepted' ? 'accepted' : body.event === 'credential_deleted' ? 'deleted' : 'failed';
    if (ex.state === to) return; // the same notification again
    if (ex.state !== 'issued') throw invalid('invalid_notification_request', `The exchange is already ${ex.state}`);
    const set = to === 'failed' ? { failure_reason: `wallet: ${(body.event_description ?? 'credential_failure').slice(0, 500)}` } : {};
    const { ops } = this.transition(scope, ex, 'issued', to, set, dpopOps);
    await this.spend(ops, 'invalid_notification_request', 'The exchange changed state meanwhile');
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(sha256b64(a));
  const y = Buffer.from(sha256b64(b));
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
  for (const field of ['credential_configuration_id', 'credential_identifier'] as const) {
    const id = body[field];
    if (typeof id === 'string' && id !== config.id) throw invalid('unknown_credential_configuration', `This access token is for credential configuration ${config.id}`);
  }
  for (const jwt of proofJwts(body)) {
    if (typeof jwt !== 'string' || !COMPACT_JWS.test(jwt)) throw invalid('invalid_proof', 'Each proof must be a signed compact JWT');
  }
}

/** Appendix F.1: `iat` is required; a proof made before its nonce could exist, or in the future, is refused (60 s of clock skew). */
function checkProofTime(jwt: string, now: number, nonceTtlSeconds: number): void {
  const iat = (decodeJwt({ jwt }).payload as Record<string, unknown>).iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalid('invalid_proof', 'The proof needs an iat');
  if (iat > now + 60 || iat < now - nonceTtlSeconds - 60) throw invalid('invalid_proof', 'The proof was not made now (iat)');
}

function proofNonce(jwt: string): string | null {
  try {
    const nonce = (decodeJwt({ jwt }).payload as Record<string, unknown>).nonce;
    return typeof nonce === 'string' ? nonce : null;
  } catch {
    throw invalid('invalid_proof', 'The proof is not a JWT');
  }
}

function publicOnly(jwk: Jwk): Record<string, unknown> {
  const { kty, crv, x, y } = jwk as Record<string, unknown>;
  return { kty, crv, x, ...(y ? { y } : {}) };
}
