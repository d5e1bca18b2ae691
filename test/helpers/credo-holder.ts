/**
 * A real wallet framework as the OpenID4VCI holder in interop tests: Credo 0.6.3
 * (`@credo-ts/openid4vc` holder) on Node without `@credo-ts/node` or Askar (see credo-support.ts).
 *
 * `receiveOffer` runs the pre-authorized code flow the way a Credo-based wallet does: resolve the
 * offer (by value or by reference) and the issuer's metadata, token request (with tx_code; DPoP
 * when the authorization server advertises it), credential request with a `jwt` proof bound to a
 * fresh `jwk` or `did:key`, then Credo's own verification of what came back. Anything Credo
 * refuses is thrown; so is a credential not bound to the key we proved.
 */
import {
  Agent,
  ConsoleLogger,
  DidsModule,
  InjectionSymbols,
  JwkDidRegistrar,
  JwkDidResolver,
  KeyDidRegistrar,
  KeyDidResolver,
  Kms,
  LogLevel,
  SdJwtVcRecord,
  W3cCredentialRecord,
  W3cJwtVerifiableCredential,
  parseDid,
  type DependencyManager,
  type Module,
  type ModulesMap,
} from '@credo-ts/core';
import { OpenId4VcModule, type OpenId4VciCredentialBindingResolver, type OpenId4VciResolvedCredentialOffer } from '@credo-ts/openid4vc';
import { InMemoryStorageService, LoopbackWebDidResolver, NodeCryptoKeyManagementService, nodeAgentDependencies } from './credo-support';

/** Registers the in-memory StorageService (what AskarModule would otherwise provide). */
class InMemoryStorageModule implements Module {
  register(dependencyManager: DependencyManager) {
    dependencyManager.registerInstance(InjectionSymbols.StorageService, new InMemoryStorageService());
  }
}

/** The modules every test agent has; `extra` adds or replaces (e.g. an issuer-enabled openid4vc). */
export function baseModules() {
  return {
    storage: new InMemoryStorageModule(),
    kms: new Kms.KeyManagementModule({ backends: [new NodeCryptoKeyManagementService()] }),
    dids: new DidsModule({
      resolvers: [new LoopbackWebDidResolver(), new KeyDidResolver(), new JwkDidResolver()],
      registrars: [new KeyDidRegistrar(), new JwkDidRegistrar()],
    }),
  };
}

export interface CredoAgentOptions {
  /** Reach hosts other than loopback (default: refused, tests have no network). */
  allowRemoteFetch?: boolean;
  /** Credo's log level; `CREDO_LOG=debug` in the environment does the same. */
  logLevel?: LogLevel;
}

export async function createCredoAgent<Extra extends ModulesMap>(extra: Extra, opts: CredoAgentOptions = {}) {
  const envLevel = process.env.CREDO_LOG ? LogLevel[process.env.CREDO_LOG as keyof typeof LogLevel] : undefined;
  const logLevel = opts.logLevel ?? envLevel ?? LogLevel.off;
  const agent = new Agent({
    config: {
      logger: new ConsoleLogger(logLevel),
      // Loopback issuers are http. NOTE: Credo sets this in @openid4vc's process-wide config, which
      // our in-process issuer shares (same package instance).
      allowInsecureHttpUrls: true,
    },
    dependencies: nodeAgentDependencies({ allowRemoteFetch: opts.allowRemoteFetch }),
    modules: { ...baseModules(), ...extra },
  });
  await agent.initialize();
  return agent;
}

export type HolderBinding = 'jwk' | 'did:key';
export type HolderAlg = 'ES256' | 'EdDSA';

export interface ReceiveOfferOptions {
  /** The PIN (tx_code) the offer asks for. */
  txCode?: string;
  binding: HolderBinding;
  /** Proof and key algorithm (default ES256: P-256). */
  alg?: HolderAlg;
  /** Offered configurations to request (default: all). */
  credentialConfigurationIds?: string[];
  /** Send `credential_accepted` for each credential that has a notification_id, if the issuer has a notification endpoint (default true). */
  notify?: boolean;
}

export interface ReceivedCredential {
  readonly configurationId: string;
  /** The configuration's format as the issuer advertised it (`dc+sd-jwt`, `vc+sd-jwt`, `jwt_vc_json`). */
  readonly format: string;
  /** The credential as issued: SD-JWT compact form (with disclosures) or the JWT. */
  readonly compact: string;
  readonly header: Record<string, unknown>;
  /** The signed JWT payload (SD-JWT: with `_sd` digests, not disclosed values). */
  readonly payload: Record<string, unknown>;
  /** SD-JWT: the payload with all disclosures applied. jwt_vc_json: `vc.credentialSubject` (with `id`). */
  readonly claims: Record<string, unknown>;
  /** The record Credo built and the harness stored. */
  readonly record: SdJwtVcRecord | W3cCredentialRecord;
  readonly notificationId?: string;
}

export interface ReceiveOfferResult {
  readonly credentials: ReceivedCredential[];
  /** Format of the first credential (offers in these tests name one configuration). */
  readonly format: string;
  readonly holder: { binding: HolderBinding; alg: HolderAlg; publicJwk: Kms.KmsJwkPublicEc | Kms.KmsJwkPublicOkp; did?: string; didUrl?: string };
  readonly resolvedOffer: OpenId4VciResolvedCredentialOffer;
  readonly accessTokenResponse: Record<string, unknown>;
  /** Whether Credo used DPoP (the authorization server advertised dpop_signing_alg_values_supported). */
  readonly dpop: boolean;
  /** notification_ids for which `credential_accepted` was sent. */
  readonly notified: string[];
}

export interface CredoHolder {
  readonly agent: Awaited<ReturnType<typeof createHolderAgent>>;
  /** An `openid-credential-offer://?credential_offer=…` / `…?credential_offer_uri=…` URI, or any URL with those parameters. */
  receiveOffer(offerUri: string, opts: ReceiveOfferOptions): Promise<ReceiveOfferResult>;
  /** Answers an OpenID4VP request (`openid://…`) with what the agent holds, as a Credo wallet does. */
  present(requestUri: string): Promise<PresentResult>;
  shutdown(): Promise<void>;
}

export interface PresentResult {
  /** Which query language the request used, as Credo read it. */
  readonly kind: 'dcql' | 'pex';
  /** The verified request payload (Credo checked its signature against the client id). */
  readonly request: Record<string, unknown>;
  readonly serverStatus: number | undefined;
  readonly serverBody: unknown;
}

/**
 * Credo's holder flow: resolve (fetch and verify the signed request object), pick the stored
 * credentials its own DCQL / Presentation Exchange engine finds for the request, and answer over
 * direct_post. Throws when Credo refuses the request or finds nothing that satisfies it.
 */
async function present(agent: CredoHolder['agent'], requestUri: string): Promise<PresentResult> {
  const holderApi = agent.openid4vc.holder;
  const resolved = await holderApi.resolveOpenId4VpAuthorizationRequest(requestUri);
  const request = resolved.authorizationRequestPayload as Record<string, unknown>;
  let result;
  if (resolved.dcql) {
    if (!resolved.dcql.queryResult.can_be_satisfied) throw new Error(`Credo holds nothing that satisfies the DCQL query: ${JSON.stringify(resolved.dcql.queryResult.credential_matches)}`);
    const credentials = holderApi.selectCredentialsForDcqlRequest(resolved.dcql.queryResult);
    result = await holderApi.acceptOpenId4VpAuthorizationRequest({ authorizationRequestPayload: resolved.authorizationRequestPayload, dcql: { credentials } });
  } else if (resolved.presentationExchange) {
    if (!resolved.presentationExchange.credentialsForRequest.areRequirementsSatisfied) throw new Error('Credo holds nothing that satisfies the presentation definition');
    const credentials = holderApi.selectCredentialsForPresentationExchangeRequest(resolved.presentationExchange.credentialsForRequest);
    result = await holderApi.acceptOpenId4VpAuthorizationRequest({ authorizationRequestPayload: resolved.authorizationRequestPayload, presentationExchange: { credentials } });
  } else {
    throw new Error('the request has neither a DCQL query nor a presentation definition');
  }
  const server = result.serverResponse as { status?: number; body?: unknown } | undefined;
  return { kind: resolved.dcql ? 'dcql' : 'pex', request, serverStatus: server?.status, serverBody: server?.body };
}

function createHolderAgent(opts: CredoAgentOptions) {
  return createCredoAgent({ openid4vc: new OpenId4VcModule({}) }, opts);
}

export async function createCredoHolder(opts: CredoAgentOptions = {}): Promise<CredoHolder> {
  const agent = await createHolderAgent(opts);
  return {
    agent,
    receiveOffer: (offerUri, options) => receiveOffer(agent, offerUri, options),
    present: (requestUri) => present(agent, requestUri),
    shutdown: () => agent.shutdown(),
  };
}

const KEY_TYPES: Record<HolderAlg, Kms.KmsCreateKeyTypeEc | Kms.KmsCreateKeyTypeOkp> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
};

async function receiveOffer(agent: CredoHolder['agent'], offerUri: string, opts: ReceiveOfferOptions): Promise<ReceiveOfferResult> {
  const holderApi = agent.openid4vc.holder;
  const alg = opts.alg ?? 'ES256';

  const resolvedOffer = await holderApi.resolveCredentialOffer(offerUri);
  const offeredIds = resolvedOffer.credentialOfferPayload.credential_configuration_ids;
  const understood = Object.keys(resolvedOffer.offeredCredentialConfigurations);
  // Credo silently drops configurations it cannot parse; say which, or the flow "succeeds" empty.
  if (understood.length === 0 || understood.length < offeredIds.length) {
    const known = Object.keys(resolvedOffer.metadata.knownCredentialConfigurations);
    throw new Error(`Credo understood only [${understood}] of the offered [${offeredIds}]; parsable configurations in the metadata: [${known}]`);
  }

  const token = await holderApi.requestToken({ resolvedCredentialOffer: resolvedOffer, txCode: opts.txCode });

  // One fresh key per offer, as a jwk or as a did:key created (and so resolvable) in this agent.
  const holder: ReceiveOfferResult['holder'] = await (async () => {
    if (opts.binding === 'jwk') {
      const { publicJwk } = await agent.kms.createKey({ type: KEY_TYPES[alg] });
      return { binding: opts.binding, alg, publicJwk: publicJwk as Kms.KmsJwkPublicEc | Kms.KmsJwkPublicOkp };
    }
    const created = await agent.dids.create({ method: 'key', options: { createKey: { type: KEY_TYPES[alg] } } });
    if (created.didState.state !== 'finished') throw new Error(`did:key creation failed: ${JSON.stringify(created.didState)}`);
    const did = created.didState.did;
    const didUrl = created.didState.didDocument.verificationMethod?.[0]?.id;
    if (!didUrl) throw new Error(`did:key document without a verification method: ${did}`);
    const { publicJwk } = await agent.dids.resolveVerificationMethodFromCreatedDidRecord(didUrl);
    return { binding: opts.binding, alg, did, didUrl, publicJwk: publicJwk.toJson() as Kms.KmsJwkPublicEc | Kms.KmsJwkPublicOkp };
  })();

  const credentialBindingResolver: OpenId4VciCredentialBindingResolver = () =>
    holder.didUrl ? { method: 'did', didUrls: [holder.didUrl] } : { method: 'jwk', keys: [Kms.PublicJwk.fromPublicJwk(holder.publicJwk)] };

  const response = await holderApi.requestCredentials({
    resolvedCredentialOffer: resolvedOffer,
    accessToken: token.accessToken,
    cNonce: token.cNonce,
    dpop: token.dpop,
    credentialConfigurationIds: opts.credentialConfigurationIds,
    allowedProofOfPossessionSignatureAlgorithms: [alg],
    credentialBindingResolver,
  });
  if (response.deferredCredentials.length > 0) throw new Error(`issuer deferred ${response.deferredCredentials.length} credential(s); the harness does not poll`);

  const credentials: ReceivedCredential[] = [];
  for (const c of response.credentials) {
    const received = await describeAndStore(agent, c.credentialConfigurationId, c.credentialConfiguration.format, c.record, c.notificationId);
    assertBoundToHolder(received, holder);
    credentials.push(received);
  }

  const notified: string[] = [];
  const notificationEndpoint = resolvedOffer.metadata.credentialIssuer.notification_endpoint;
  if ((opts.notify ?? true) && notificationEndpoint) {
    for (const c of credentials) {
      if (!c.notificationId) continue;
      await holderApi.sendNotification({
        metadata: resolvedOffer.metadata,
        notificationId: c.notificationId,
        accessToken: token.accessToken,
        notificationEvent: 'credential_accepted',
        dpop: response.dpop,
      });
      notified.push(c.notificationId);
    }
  }

  return {
    credentials,
    format: credentials[0]?.format ?? '',
    holder,
    resolvedOffer,
    accessTokenResponse: token.accessTokenResponse as Record<string, unknown>,
    dpop: token.dpop !== undefined,
    notified,
  };
}

/** Stores the record Credo verified, and lays out what tests assert on. */
async function describeAndStore(agent: CredoHolder['agent'], configurationId: string, format: string, record: unknown, notificationId?: string): Promise<ReceivedCredential> {
  if (record instanceof SdJwtVcRecord) {
    await agent.sdJwtVc.store({ record });
    const sdJwt = record.firstCredential;
    return {
      configurationId,
      format,
      compact: sdJwt.compact,
      header: sdJwt.header,
      payload: sdJwt.payload,
      claims: sdJwt.prettyClaims,
      record,
      notificationId,
    };
  }
  if (record instanceof W3cCredentialRecord) {
    await agent.w3cCredentials.store({ record });
    const vc = record.firstCredential;
    if (!(vc instanceof W3cJwtVerifiableCredential)) throw new Error(`expected a JWT VC for ${configurationId}, got ${vc.claimFormat}`);
    const subject = Array.isArray(vc.credentialSubject) ? vc.credentialSubject[0] : vc.credentialSubject;
    return {
      configurationId,
      format,
      compact: vc.serializedJwt,
      header: vc.jwt.header as Record<string, unknown>,
      payload: vc.jwt.payload.toJson() as Record<string, unknown>,
      claims: { ...(subject?.claims ?? {}), ...(subject?.id ? { id: subject.id } : {}) },
      record,
      notificationId,
    };
  }
  throw new Error(`unexpected credential record for ${configurationId}: ${(record as { type?: string })?.type}`);
}

/**
 * Credo checks that a `cnf.jwk` is a key it asked for, but not that a DID-bound credential names
 * the DID it proved; a wallet would not want a credential bound to someone else.
 */
function assertBoundToHolder(c: ReceivedCredential, holder: ReceiveOfferResult['holder']) {
  if (c.record instanceof SdJwtVcRecord) {
    const cnf = c.payload.cnf as { jwk?: unknown; kid?: string } | undefined;
    if (!cnf) throw new Error(`${c.configurationId}: SD-JWT VC without cnf`);
    if (holder.didUrl) {
      if (!cnf.kid || parseDid(cnf.kid).did !== holder.did) throw new Error(`${c.configurationId}: cnf ${JSON.stringify(cnf)} does not name ${holder.didUrl}`);
    } else if (!cnf.jwk || !Kms.PublicJwk.fromUnknown(cnf.jwk).equals(Kms.PublicJwk.fromPublicJwk(holder.publicJwk))) {
      throw new Error(`${c.configurationId}: cnf ${JSON.stringify(cnf)} is not the holder's jwk`);
    }
    return;
  }
  const subjectIds = (c.record as W3cCredentialRecord).firstCredential.credentialSubjectIds;
  if (holder.did && !subjectIds.includes(holder.did)) throw new Error(`${c.configurationId}: credentialSubject ids [${subjectIds}] do not include ${holder.did}`);
}
