/**
 * An independent DIDComm v1 agent for interop tests: Credo 0.6.3 (`@credo-ts/core` +
 * `@credo-ts/didcomm`) without Askar or `@credo-ts/node`. What Askar would give it:
 * - key management: credo-support.ts's node:crypto backend, plus the operations Credo's envelope
 *   service asks for, on libsodium-wrappers: `ECDH-HSALSA20` key agreement with `XSALSA20-POLY1305`
 *   (crypto_box when a sender key is named, crypto_box_seal when not) and `C20P` (IETF
 *   ChaCha20-Poly1305) under a raw content key;
 * - an HTTP inbound transport on a loopback port (node:http), and Credo's own HTTP outbound
 *   transport over credo-support's loopback-only fetch.
 * Storage is in memory. Test-only.
 */
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import {
  Agent,
  ConsoleLogger,
  DidDocument,
  DidResolverService,
  DidsModule,
  JsonTransformer,
  InjectionSymbols,
  KeyDidRegistrar,
  KeyDidResolver,
  Kms,
  LogLevel,
  PeerDidRegistrar,
  PeerDidResolver,
  W3cCredentialsModule,
  W3cCredentialsModuleConfig,
  type AgentContext,
  type DependencyManager,
  type DidResolutionResult,
  type DidResolver,
  type Module,
} from '@credo-ts/core';
import {
  DidCommBasicMessageEventTypes,
  DidCommBasicMessageRole,
  DidCommAutoAcceptCredential,
  DidCommConnectionEventTypes,
  DidCommCredentialEventTypes,
  DidCommCredentialState,
  DidCommCredentialV2Protocol,
  DidCommJsonLdCredentialFormatService,
  type DidCommCredentialExchangeRecord,
  type DidCommCredentialFormatService,
  type DidCommCredentialStateChangedEvent,
  DidCommDidExchangeState,
  DidCommHttpOutboundTransport,
  DidCommMessageReceiver,
  DidCommModule,
  type DidCommBasicMessageStateChangedEvent,
  type DidCommConnectionRecord,
  type DidCommConnectionStateChangedEvent,
  type DidCommInboundTransport,
} from '@credo-ts/didcomm';
import jsonld from 'jsonld';
import sodium from 'libsodium-wrappers';
import { BUNDLED_CONTEXTS } from '../../lib/jsonld/contexts';
import { InMemoryStorageService, isLoopbackUrl, NodeCryptoKeyManagementService, nodeAgentDependencies } from './credo-support';

// ---------------------------------------------------------------------------------------------
// Key management: DIDComm v1 envelope operations on libsodium

const unb64u = (text: string) => new Uint8Array(Buffer.from(text, 'base64url'));
/** A copy on a plain ArrayBuffer, the type Credo's KMS returns. */
const own = (bytes: Uint8Array) => new Uint8Array(bytes);

export class SodiumDidcommKeyManagementService extends NodeCryptoKeyManagementService {

  override isOperationSupported(agentContext: AgentContext, operation: Kms.KmsOperation): boolean {
    if (operation.operation === 'encrypt' || operation.operation === 'decrypt') {
      const algorithm = operation.operation === 'encrypt' ? operation.encryption.algorithm : operation.decryption.algorithm;
      if (operation.keyAgreement) return operation.keyAgreement.algorithm === 'ECDH-HSALSA20' && algorithm === 'XSALSA20-POLY1305';
      return algorithm === 'C20P';
    }
    return super.isOperationSupported(agentContext, operation);
  }

  /** Our Ed25519 key as X25519 (public, secret), as libsodium converts it. */
  #x25519(agentContext: AgentContext, keyId: string) {
    const jwk = this.privateJwkOf(agentContext, keyId) as Kms.KmsJwkPrivateOkp | undefined;
    if (!jwk || jwk.crv !== 'Ed25519') throw new Kms.KeyManagementKeyNotFoundError(keyId, [this.backend]);
    const pair = sodium.crypto_sign_seed_keypair(unb64u(jwk.d));
    return { publicKey: sodium.crypto_sign_ed25519_pk_to_curve25519(pair.publicKey), secretKey: sodium.crypto_sign_ed25519_sk_to_curve25519(pair.privateKey) };
  }

  override async encrypt(agentContext: AgentContext, options: Kms.KmsEncryptOptions): Promise<Kms.KmsEncryptReturn> {
    await sodium.ready;
    const { key, encryption, data } = options;
    if ('keyAgreement' in key && key.keyAgreement) {
      const agreement = key.keyAgreement as { algorithm: string; keyId?: string; externalPublicJwk: { x: string } };
      if (agreement.algorithm !== 'ECDH-HSALSA20' || encryption.algorithm !== 'XSALSA20-POLY1305') throw new Kms.KeyManagementAlgorithmNotSupportedError('key agreement', this.backend);
      const recipient = unb64u(agreement.externalPublicJwk.x);
      if (!agreement.keyId) return { encrypted: own(sodium.crypto_box_seal(data, recipient)) };
      const nonce = sodium.randombytes_buf(sodium.crypto_box_NONCEBYTES);
      return { encrypted: own(sodium.crypto_box_easy(data, nonce, recipient, this.#x25519(agentContext, agreement.keyId).secretKey)), iv: own(nonce) };
    }
    if ('privateJwk' in key && key.privateJwk?.kty === 'oct' && encryption.algorithm === 'C20P') {
      const iv = encryption.iv ?? sodium.randombytes_buf(sodium.crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
      const sealed = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(data, encryption.aad ?? null, null, iv, unb64u(key.privateJwk.k));
      return { encrypted: own(sealed.subarray(0, sealed.length - 16)), iv: own(iv), tag: own(sealed.subarray(sealed.length - 16)) };
    }
    throw new Kms.KeyManagementAlgorithmNotSupportedError(`encryption ${encryption.algorithm}`, this.backend);
  }

  override async decrypt(agentContext: AgentContext, options: Kms.KmsDecryptOptions): Promise<Kms.KmsDecryptReturn> {
    await sodium.ready;
    const { key, decryption, encrypted } = options;
    if ('keyAgreement' in key && key.keyAgreement) {
      const agreement = key.keyAgreement as { algorithm: string; keyId: string; externalPublicJwk?: { x: string } };
      if (agreement.algorithm !== 'ECDH-HSALSA20' || decryption.algorithm !== 'XSALSA20-POLY1305') throw new Kms.KeyManagementAlgorithmNotSupportedError('key agreement', this.backend);
      const ours = this.#x25519(agentContext, agreement.keyId);
      if (agreement.externalPublicJwk && decryption.iv) {
        return { data: own(sodium.crypto_box_open_easy(encrypted, decryption.iv, unb64u(agreement.externalPublicJwk.x), ours.secretKey)) };
      }
      return { data: own(sodium.crypto_box_seal_open(encrypted, ours.publicKey, ours.secretKey)) };
    }
    if ('privateJwk' in key && key.privateJwk?.kty === 'oct' && decryption.algorithm === 'C20P') {
      if (!decryption.iv || !decryption.tag) throw new Kms.KeyManagementError('C20P needs iv and tag');
      const sealed = new Uint8Array([...encrypted, ...decryption.tag]);
      return { data: own(sodium.crypto_aead_chacha20poly1305_ietf_decrypt(null, sealed, decryption.aad ?? null, decryption.iv, unb64u(key.privateJwk.k))) };
    }
    throw new Kms.KeyManagementAlgorithmNotSupportedError(`decryption ${decryption.algorithm}`, this.backend);
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP inbound transport on loopback

const MAX_BODY = 1024 * 1024;

/** Accepts POSTed envelopes and hands them to Credo's message receiver; answers once processed. */
class LoopbackHttpInboundTransport implements DidCommInboundTransport {
  #context: AgentContext | undefined;
  constructor(private readonly server: Server) {}

  async start(agentContext: AgentContext) {
    this.#context = agentContext;
    this.server.on('request', (req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) req.destroy();
        else chunks.push(c);
      });
      req.on('end', async () => {
        try {
          const receiver = this.#context!.dependencyManager.resolve(DidCommMessageReceiver);
          await receiver.receiveMessage(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          res.writeHead(200).end();
        } catch (error) {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(String((error as Error).message));
        }
      });
    });
  }

  async stop() {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------
// DID resolution over HTTP, as a Universal Resolver client does

/**
 * Resolves DIDs of the given methods by `GET <base>/1.0/identifiers/<did>` (DID Resolution's HTTP
 * binding, asking for the document alone), as Credo would through a Universal Resolver. Loopback
 * bases only: tests talk to nothing else.
 */
export class HttpDidResolver implements DidResolver {
  readonly allowsCaching = false;
  readonly allowsLocalDidRecord = false;
  constructor(
    readonly supportedMethods: string[],
    private readonly base: string,
  ) {
    if (!isLoopbackUrl(base)) throw new Error(`HttpDidResolver: ${base} is not a loopback URL`);
  }

  async resolve(agentContext: AgentContext, did: string): Promise<DidResolutionResult> {
    const url = `${this.base.replace(/\/+$/, '')}/1.0/identifiers/${encodeURIComponent(did)}`;
    const res = await agentContext.config.agentDependencies.fetch(url, { headers: { accept: 'application/did+json' } });
    if (!res.ok) return { didDocument: null, didDocumentMetadata: {}, didResolutionMetadata: { error: 'notFound', message: `GET ${url}: ${res.status}` } };
    return { didDocument: JsonTransformer.fromJSON(await res.json(), DidDocument), didDocumentMetadata: {}, didResolutionMetadata: { contentType: 'application/did+json' } };
  }
}

// ---------------------------------------------------------------------------------------------
// The peer

class InMemoryStorageModule implements Module {
  register(dependencyManager: DependencyManager) {
    dependencyManager.registerInstance(InjectionSymbols.StorageService, new InMemoryStorageService());
  }
}

export interface CredoPeer {
  agent: Agent;
  endpoint: string;
  createInvitation(opts?: { multiUse?: boolean }): Promise<{ invitationUrl: string; outOfBandId: string }>;
  receiveInvitationUrl(url: string): Promise<{ connectionId: string }>;
  /** Connects to a DID's DIDComm service: an implicit invitation (RFC 0023/0434), resolved with the peer's resolvers. */
  receiveImplicitInvitation(did: string): Promise<{ connectionId: string }>;
  waitForConnection(predicate?: (c: { id: string; state: string; theirLabel?: string; outOfBandId?: string }) => boolean, timeoutMs?: number): Promise<{ id: string; state: string; theirLabel?: string }>;
  sendBasicMessage(connectionId: string, content: string): Promise<void>;
  waitForBasicMessage(predicate: (content: string) => boolean, timeoutMs?: number): Promise<{ content: string; connectionId: string }>;
  /** With `jsonLdCredentials`: the first credential exchange (Issue Credential 2.0) reaching `state` that `predicate` accepts. */
  waitForCredentialExchange(state: DidCommCredentialState, predicate?: (r: DidCommCredentialExchangeRecord) => boolean, timeoutMs?: number): Promise<DidCommCredentialExchangeRecord>;
  stop(): Promise<void>;
}

/** The contexts Credo 0.6.3 bundles (its loader serves them without a fetch), read from its build. */
let credoContexts: Promise<Set<string>> | undefined;
function credoBundledContexts(): Promise<Set<string>> {
  const file = join(dirname(createRequire(import.meta.url).resolve('@credo-ts/core')), 'modules/vc/data-integrity/libraries/contexts/defaultContexts.mjs');
  credoContexts ??= import(pathToFileURL(file).href).then((m: { DEFAULT_CONTEXTS: Record<string, unknown> }) => new Set(Object.keys(m.DEFAULT_CONTEXTS)));
  return credoContexts;
}

/**
 * Credo's JSON-LD document loader given the published contexts it does not bundle (from the npm
 * packages, as lib/jsonld/contexts.ts holds them): its own loader fetches the Ed25519 2020 suite's and
 * others from w3id.org, and tests have no network. A context neither holds is refused here, before
 * Credo's loader would fetch it (so a test sees what an offline Credo does, and the network fence
 * records nothing). A DID URL is dereferenced as Credo's loader does it (resolve, then frame the
 * document on the id), except that the document's contexts come through this loader too: Credo's own
 * frames with itself, so it would fetch a context of the DID document it does not bundle.
 */
export function credoW3cModule(): W3cCredentialsModule {
  const credoDefaultLoader = new W3cCredentialsModuleConfig().documentLoader;
  return new W3cCredentialsModule({
    documentLoader: (agentContext) => {
      const credo = credoDefaultLoader(agentContext);
      const loader = async (url: string): Promise<any> => {
        const context = BUNDLED_CONTEXTS.get(url);
        if (context) return { contextUrl: null, documentUrl: url, document: context };
        if (url.startsWith('did:')) {
          const resolved = await agentContext.dependencyManager.resolve(DidResolverService).resolve(agentContext, url);
          if (!resolved.didDocument) throw new Error(`Unable to resolve DID: ${url}`);
          const json = resolved.didDocument.toJSON() as Record<string, unknown>;
          // jsonld's frame (the package's type declarations here cover what lib/ uses only).
          const ld = jsonld as unknown as { frame(input: unknown, frame: unknown, options: { documentLoader: typeof loader }): Promise<unknown> };
          const framed = await ld.frame(json, { '@context': json['@context'], '@embed': '@never', id: url }, { documentLoader: loader });
          return { contextUrl: null, documentUrl: url, document: framed };
        }
        if ((await credoBundledContexts()).has(url)) return credo(url);
        throw new Error(`${url} is bundled neither by Credo 0.6.3 nor by the test (an online Credo fetches it)`);
      };
      return loader;
    },
  });
}

/** `resolvers`: for DIDs beyond did:peer and did:key (a public DID to connect to). */
/** `jsonLdCredentials`: also a holder of Issue Credential 2.0 with the JSON-LD (ld_proof) format, accepting every offer and credential. */
/** `credentialFormats`: further Issue Credential 2.0 format services of the holder (e.g. test/helpers/credo-anoncreds-format.ts). */
export async function startCredoPeer(opts: { label?: string; logLevel?: LogLevel; resolvers?: DidResolver[]; jsonLdCredentials?: boolean; credentialFormats?: DidCommCredentialFormatService[] } = {}): Promise<CredoPeer> {
  await sodium.ready;
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const envLevel = process.env.CREDO_LOG ? LogLevel[process.env.CREDO_LOG as keyof typeof LogLevel] : undefined;

  const agent = new Agent({
    config: { label: opts.label ?? 'credo-peer', logger: new ConsoleLogger(opts.logLevel ?? envLevel ?? LogLevel.off) } as ConstructorParameters<typeof Agent>[0]['config'],
    dependencies: nodeAgentDependencies(),
    modules: {
      storage: new InMemoryStorageModule(),
      ...(opts.jsonLdCredentials ? { w3cCredentials: credoW3cModule() } : {}),
      kms: new Kms.KeyManagementModule({ backends: [new SodiumDidcommKeyManagementService()] }),
      dids: new DidsModule({ resolvers: [new PeerDidResolver(), new KeyDidResolver(), ...(opts.resolvers ?? [])], registrars: [new PeerDidRegistrar(), new KeyDidRegistrar()] }),
      didcomm: new DidCommModule({
        endpoints: [endpoint],
        transports: { inbound: [new LoopbackHttpInboundTransport(server)], outbound: [new DidCommHttpOutboundTransport()] },
        connections: { autoAcceptConnections: true },
        basicMessages: true,
        // What DID Exchange needs and nothing more (and, when asked for, JSON-LD credentials as a holder).
        credentials:
          opts.jsonLdCredentials || opts.credentialFormats
            ? {
                credentialProtocols: [new DidCommCredentialV2Protocol({ credentialFormats: [...(opts.jsonLdCredentials ? [new DidCommJsonLdCredentialFormatService()] : []), ...(opts.credentialFormats ?? [])] })],
                autoAcceptCredentials: DidCommAutoAcceptCredential.Always,
              }
            : false,
        proofs: false,
        messagePickup: false,
        mediator: false,
        mediationRecipient: false,
      }),
    },
  });
  await agent.initialize();
  const didcomm = agent.modules.didcomm;

  const summary = (c: DidCommConnectionRecord) => ({ id: c.id, state: c.state, theirLabel: c.theirLabel, outOfBandId: c.outOfBandId });

  return {
    agent,
    endpoint,
    async createInvitation(o = {}) {
      const record = await didcomm.oob.createInvitation({ multiUseInvitation: o.multiUse ?? false, label: opts.label ?? 'credo-peer' });
      return { invitationUrl: record.outOfBandInvitation.toUrl({ domain: endpoint }), outOfBandId: record.id };
    },
    async receiveInvitationUrl(url) {
      const { connectionRecord } = await didcomm.oob.receiveInvitationFromUrl(url, { autoAcceptInvitation: true, autoAcceptConnection: true, label: opts.label ?? 'credo-peer' });
      if (!connectionRecord) throw new Error('credo peer: the invitation made no connection');
      return { connectionId: connectionRecord.id };
    },
    async receiveImplicitInvitation(did) {
      const { connectionRecord } = await didcomm.oob.receiveImplicitInvitation({ did, autoAcceptInvitation: true, autoAcceptConnection: true, label: opts.label ?? 'credo-peer' });
      if (!connectionRecord) throw new Error('credo peer: the implicit invitation made no connection');
      return { connectionId: connectionRecord.id };
    },
    async waitForConnection(predicate = () => true, timeoutMs = 20_000) {
      const done = (c: DidCommConnectionRecord) => c.state === DidCommDidExchangeState.Completed && predicate(summary(c));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (off(), reject(new Error('credo peer: no completed connection in time'))), timeoutMs);
        const listener = ({ payload }: DidCommConnectionStateChangedEvent) => {
          if (done(payload.connectionRecord)) (off(), resolve(summary(payload.connectionRecord)));
        };
        const off = () => (clearTimeout(timer), agent.events.off(DidCommConnectionEventTypes.DidCommConnectionStateChanged, listener));
        agent.events.on(DidCommConnectionEventTypes.DidCommConnectionStateChanged, listener);
        void didcomm.connections.getAll().then((all) => {
          const found = all.find(done);
          if (found) (off(), resolve(summary(found)));
        });
      });
    },
    async sendBasicMessage(connectionId, content) {
      await didcomm.basicMessages!.sendMessage(connectionId, content);
    },
    async waitForBasicMessage(predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (off(), reject(new Error('credo peer: no matching basic message in time'))), timeoutMs);
        const listener = ({ payload }: DidCommBasicMessageStateChangedEvent) => {
          const record = payload.basicMessageRecord;
          if (record.role === DidCommBasicMessageRole.Receiver && predicate(record.content)) (off(), resolve({ content: record.content, connectionId: record.connectionId }));
        };
        const off = () => (clearTimeout(timer), agent.events.off(DidCommBasicMessageEventTypes.DidCommBasicMessageStateChanged, listener));
        agent.events.on(DidCommBasicMessageEventTypes.DidCommBasicMessageStateChanged, listener);
        void didcomm.basicMessages!.findAllByQuery({ role: DidCommBasicMessageRole.Receiver }).then((all) => {
          const found = all.find((r) => predicate(r.content));
          if (found) (off(), resolve({ content: found.content, connectionId: found.connectionId }));
        });
      });
    },
    async waitForCredentialExchange(state, predicate = () => true, timeoutMs = 30_000) {
      const done = (r: DidCommCredentialExchangeRecord) => r.state === state && predicate(r);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (off(), reject(new Error(`credo peer: no credential exchange in state ${state} in time`))), timeoutMs);
        const listener = ({ payload }: DidCommCredentialStateChangedEvent) => {
          if (done(payload.credentialExchangeRecord)) (off(), resolve(payload.credentialExchangeRecord));
        };
        const off = () => (clearTimeout(timer), agent.events.off(DidCommCredentialEventTypes.DidCommCredentialStateChanged, listener));
        agent.events.on(DidCommCredentialEventTypes.DidCommCredentialStateChanged, listener);
        const api = (agent.modules.didcomm as unknown as { credentials?: { getAll(): Promise<DidCommCredentialExchangeRecord[]> } }).credentials;
        void api?.getAll().then((all) => {
          const found = all.find(done);
          if (found) (off(), resolve(found));
        });
      });
    },
    async stop() {
      await agent.shutdown();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
