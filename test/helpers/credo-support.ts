/**
 * What a Credo 0.6 agent needs on Node when neither `@credo-ts/node` nor Askar is available: agent
 * dependencies, a key management backend on node:crypto, in-memory storage, and a did:web resolver
 * that reaches our loopback runtime over http. Test-only: keys and records live in process memory.
 */
import { EventEmitter } from 'node:events';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign as cryptoSign, verify as cryptoVerify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DidDocument,
  JsonTransformer,
  Kms,
  RecordDuplicateError,
  RecordNotFoundError,
  StorageVersionRecord,
  WebDidResolver,
  type AgentContext,
  type AgentDependencies,
  type BaseRecord,
  type BaseRecordConstructor,
  type DidResolutionOptions,
  type DidResolutionResult,
  type DidResolver,
  type FileSystem,
  type ParsedDid,
  type Query,
  type QueryOptions,
  type StorageService,
  type TagsBase,
} from '@credo-ts/core';

// ---------------------------------------------------------------------------------------------
// Agent dependencies

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackUrl(url: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * Global fetch, refused for anything but loopback: tests have no network, and Credo otherwise tries
 * e.g. `https://example.com/identity` for SD-JWT VC type metadata and waits for it to time out.
 */
export function loopbackFetch(allowRemote = false): typeof fetch {
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!allowRemote && !isLoopbackUrl(url)) throw new TypeError(`credo test agent: no network beyond loopback (${url})`);
    return fetch(input, init);
  }) as typeof fetch;
}

/** Files in memory; Credo asks for a FileSystem but the flows we run never touch it. */
class MemoryFileSystem implements FileSystem {
  readonly dataPath = join(tmpdir(), 'credo-test', 'data');
  readonly cachePath = join(tmpdir(), 'credo-test', 'cache');
  readonly tempPath = join(tmpdir(), 'credo-test', 'tmp');
  readonly #files = new Map<string, string>();
  async exists(path: string) {
    return this.#files.has(path);
  }
  async createDirectory() {}
  async copyFile(source: string, destination: string) {
    const data = this.#files.get(source);
    if (data === undefined) throw new Error(`no such file: ${source}`);
    this.#files.set(destination, data);
  }
  async write(path: string, data: string) {
    this.#files.set(path, data);
  }
  async read(path: string) {
    const data = this.#files.get(path);
    if (data === undefined) throw new Error(`no such file: ${path}`);
    return data;
  }
  async delete(path: string) {
    this.#files.delete(path);
  }
  async downloadToFile(url: string): Promise<void> {
    throw new Error(`credo test agent: downloads are not supported (${url})`);
  }
}

/** DIDComm transports are the only users of WebSocket; we never run DIDComm. */
class NoWebSocket {
  constructor() {
    throw new Error('credo test agent: WebSocket is not available (DIDComm is not used)');
  }
}

export function nodeAgentDependencies(opts: { allowRemoteFetch?: boolean } = {}): AgentDependencies {
  return {
    FileSystem: MemoryFileSystem,
    EventEmitterClass: EventEmitter,
    fetch: loopbackFetch(opts.allowRemoteFetch),
    WebSocketClass: NoWebSocket as unknown as AgentDependencies['WebSocketClass'],
  };
}

// ---------------------------------------------------------------------------------------------
// Key management on node:crypto

type AsymmetricPrivateJwk = Kms.KmsJwkPrivateEc | Kms.KmsJwkPrivateOkp;
type AsymmetricPublicJwk = Kms.KmsJwkPublicEc | Kms.KmsJwkPublicOkp;

const EC_CURVES = ['P-256', 'P-384', 'P-521'] as const;
/** JWS alg → the digest node:crypto needs (null: Ed25519 hashes internally). */
const SIGNING_ALGS: Partial<Record<Kms.KnownJwaSignatureAlgorithm, string | null>> = {
  ES256: 'sha256',
  ES384: 'sha384',
  ES512: 'sha512',
  EdDSA: null,
  Ed25519: null,
};

function supportedKeyType(type: { kty: string; crv?: string }): boolean {
  if (type.kty === 'EC') return (EC_CURVES as readonly string[]).includes(type.crv ?? '');
  if (type.kty === 'OKP') return type.crv === 'Ed25519';
  return false;
}

/** Only the members node:crypto reads; Credo's JWKs carry kid, key_ops and the like. */
function keyMaterial(jwk: { kty: string; crv?: string; x?: string; y?: string; d?: string }) {
  const { kty, crv, x, y, d } = jwk;
  return Object.fromEntries(Object.entries({ kty, crv, x, y, d }).filter(([, v]) => v !== undefined)) as JsonWebKey;
}

/**
 * Credo 0.6's `Kms.KeyManagementService` for EC P-256/384/521 and Ed25519 signatures. No
 * encryption: OpenID4VCI issuance without response encryption never asks for it.
 */
export class NodeCryptoKeyManagementService implements Kms.KeyManagementService {
  readonly backend = 'node-crypto-test';
  /** Private JWKs per agent context, then per key id. */
  readonly #keys = new Map<string, Map<string, AsymmetricPrivateJwk>>();

  /** A stored private JWK, for subclasses that add operations (credo-didcomm.ts: DIDComm v1 envelopes). */
  protected privateJwkOf(agentContext: AgentContext, keyId: string): AsymmetricPrivateJwk | undefined {
    return this.#store(agentContext).get(keyId);
  }

  #store(agentContext: AgentContext) {
    let keys = this.#keys.get(agentContext.contextCorrelationId);
    if (!keys) this.#keys.set(agentContext.contextCorrelationId, (keys = new Map()));
    return keys;
  }

  isOperationSupported(_agentContext: AgentContext, operation: Kms.KmsOperation): boolean {
    switch (operation.operation) {
      case 'createKey':
        return supportedKeyType(operation.type);
      case 'importKey':
        return supportedKeyType(operation.privateJwk);
      case 'sign':
      case 'verify':
        return operation.algorithm in SIGNING_ALGS;
      case 'deleteKey':
      case 'randomBytes':
        return true;
      default:
        return false;
    }
  }

  randomBytes(_agentContext: AgentContext, options: Kms.KmsRandomBytesOptions): Kms.KmsRandomBytesReturn {
    return new Uint8Array(randomBytes(options.length));
  }

  async getPublicKey(agentContext: AgentContext, keyId: string): Promise<Kms.KmsJwkPublic | null> {
    const privateJwk = this.#store(agentContext).get(keyId);
    return privateJwk ? { ...Kms.publicJwkFromPrivateJwk(privateJwk), kid: keyId } : null;
  }

  async createKey<Type extends Kms.KmsCreateKeyType>(agentContext: AgentContext, options: Kms.KmsCreateKeyOptions<Type>): Promise<Kms.KmsCreateKeyReturn<Type>> {
    const { type } = options;
    if (!supportedKeyType(type as { kty: string; crv?: string })) throw new Kms.KeyManagementAlgorithmNotSupportedError(`key type ${JSON.stringify(type)}`, this.backend);
    const keyId = options.keyId ?? randomUUID();
    this.#assertAbsent(agentContext, keyId);
    const pair = type.kty === 'EC' ? generateKeyPairSync('ec', { namedCurve: (type as Kms.KmsCreateKeyTypeEc).crv }) : generateKeyPairSync('ed25519');
    const privateJwk = { ...pair.privateKey.export({ format: 'jwk' }), kid: keyId } as AsymmetricPrivateJwk;
    this.#store(agentContext).set(keyId, privateJwk);
    const publicJwk = { ...Kms.publicJwkFromPrivateJwk(privateJwk), kid: keyId };
    return { keyId, publicJwk } as unknown as Kms.KmsCreateKeyReturn<Type>;
  }

  async importKey<Jwk extends Kms.KmsJwkPrivate>(agentContext: AgentContext, options: Kms.KmsImportKeyOptions<Jwk>): Promise<Kms.KmsImportKeyReturn<Jwk>> {
    const jwk = options.privateJwk as unknown as AsymmetricPrivateJwk;
    if (!supportedKeyType(jwk)) throw new Kms.KeyManagementAlgorithmNotSupportedError(`kty '${jwk.kty}'`, this.backend);
    const keyId = jwk.kid ?? randomUUID();
    this.#assertAbsent(agentContext, keyId);
    createPrivateKey({ key: keyMaterial(jwk), format: 'jwk' }); // throws on a malformed key
    this.#store(agentContext).set(keyId, { ...jwk, kid: keyId });
    const publicJwk = { ...Kms.publicJwkFromPrivateJwk(jwk), kid: keyId };
    return { keyId, publicJwk } as unknown as Kms.KmsImportKeyReturn<Jwk>;
  }

  async deleteKey(agentContext: AgentContext, options: Kms.KmsDeleteKeyOptions): Promise<boolean> {
    return this.#store(agentContext).delete(options.keyId);
  }

  async sign(agentContext: AgentContext, options: Kms.KmsSignOptions): Promise<Kms.KmsSignReturn> {
    const privateJwk = this.#store(agentContext).get(options.keyId);
    if (!privateJwk) throw new Kms.KeyManagementKeyNotFoundError(options.keyId, [this.backend]);
    Kms.assertAllowedSigningAlgForKey(privateJwk, options.algorithm);
    Kms.assertKeyAllowsSign(privateJwk);
    const key = createPrivateKey({ key: keyMaterial(privateJwk), format: 'jwk' });
    return { signature: new Uint8Array(signWith(options.algorithm, options.data, key)) };
  }

  async verify(agentContext: AgentContext, options: Kms.KmsVerifyOptions): Promise<Kms.KmsVerifyReturn> {
    let jwk: AsymmetricPublicJwk | AsymmetricPrivateJwk;
    if (options.key.keyId) {
      const stored = this.#store(agentContext).get(options.key.keyId);
      if (!stored) throw new Kms.KeyManagementKeyNotFoundError(options.key.keyId, [this.backend]);
      jwk = stored;
    } else {
      jwk = options.key.publicJwk as AsymmetricPublicJwk;
      if (!supportedKeyType(jwk)) throw new Kms.KeyManagementAlgorithmNotSupportedError(`kty '${jwk.kty}'`, this.backend);
    }
    Kms.assertAllowedSigningAlgForKey(jwk, options.algorithm);
    Kms.assertKeyAllowsVerify(jwk);
    const { d: _d, ...publicMaterial } = keyMaterial(jwk);
    const key = createPublicKey({ key: publicMaterial, format: 'jwk' });
    const verified = verifyWith(options.algorithm, options.data, key, options.signature);
    return verified ? { verified: true, publicJwk: Kms.publicJwkFromPrivateJwk(jwk as AsymmetricPrivateJwk) } : { verified: false };
  }

  async encrypt(_agentContext: AgentContext, _options: Kms.KmsEncryptOptions): Promise<Kms.KmsEncryptReturn> {
    throw new Kms.KeyManagementAlgorithmNotSupportedError('encryption', this.backend);
  }

  async decrypt(_agentContext: AgentContext, _options: Kms.KmsDecryptOptions): Promise<Kms.KmsDecryptReturn> {
    throw new Kms.KeyManagementAlgorithmNotSupportedError('decryption', this.backend);
  }

  #assertAbsent(agentContext: AgentContext, keyId: string) {
    if (this.#store(agentContext).has(keyId)) throw new Kms.KeyManagementKeyExistsError(keyId, this.backend);
  }
}

// JWS wants ECDSA signatures as r||s (IEEE P1363), not node's default DER.
function signWith(alg: Kms.KnownJwaSignatureAlgorithm, data: Uint8Array, key: KeyObject): Buffer {
  const digest = SIGNING_ALGS[alg];
  if (digest === undefined) throw new Kms.KeyManagementAlgorithmNotSupportedError(`alg '${alg}'`, 'node-crypto-test');
  return digest === null ? cryptoSign(null, data, key) : cryptoSign(digest, data, { key, dsaEncoding: 'ieee-p1363' });
}

function verifyWith(alg: Kms.KnownJwaSignatureAlgorithm, data: Uint8Array, key: KeyObject, signature: Uint8Array): boolean {
  const digest = SIGNING_ALGS[alg];
  if (digest === undefined) throw new Kms.KeyManagementAlgorithmNotSupportedError(`alg '${alg}'`, 'node-crypto-test');
  return digest === null ? cryptoVerify(null, data, key, signature) : cryptoVerify(digest, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
}

// ---------------------------------------------------------------------------------------------
// Storage in memory

interface StoredRecord {
  readonly id: string;
  readonly type: string;
  readonly value: Record<string, unknown>;
  readonly tags: TagsBase;
}

/**
 * Credo's `StorageService` in memory, per agent context. Queries follow Askar's semantics, which is
 * what Credo's repositories are written against: `$and` all, `$or` at least one (none of an empty
 * list), `$not` negates, an `undefined` value is no condition, `null` matches an absent tag, an
 * array value needs every element in the record's array tag, anything else is strict equality.
 */
export class InMemoryStorageService<T extends BaseRecord<any, any, any> = BaseRecord<any, any, any>> implements StorageService<T> {
  readonly supportsCursorPagination = false;
  readonly #contexts = new Map<string, Map<string, StoredRecord>>();

  #records(agentContext: AgentContext): Map<string, StoredRecord> {
    let records = this.#contexts.get(agentContext.contextCorrelationId);
    if (!records) {
      records = new Map();
      this.#contexts.set(agentContext.contextCorrelationId, records);
      // A fresh store is at the current framework version; without this Agent.initialize would
      // assume an old wallet and try to migrate it.
      const version = new StorageVersionRecord({ storageVersion: StorageVersionRecord.frameworkStorageVersion });
      records.set(version.id, toStored(version));
    }
    return records;
  }

  async save(agentContext: AgentContext, record: T): Promise<void> {
    const records = this.#records(agentContext);
    if (records.has(record.id)) throw new RecordDuplicateError(`record ${record.id} already exists`, { recordType: record.type });
    record.updatedAt = new Date();
    records.set(record.id, toStored(record));
  }

  async update(agentContext: AgentContext, record: T): Promise<void> {
    const records = this.#records(agentContext);
    if (!records.has(record.id)) throw new RecordNotFoundError(`record ${record.id} not found`, { recordType: record.type });
    record.updatedAt = new Date();
    records.set(record.id, toStored(record));
  }

  async delete(agentContext: AgentContext, record: T): Promise<void> {
    if (!this.#records(agentContext).delete(record.id)) throw new RecordNotFoundError(`record ${record.id} not found`, { recordType: record.type });
  }

  async deleteById(agentContext: AgentContext, recordClass: BaseRecordConstructor<T>, id: string): Promise<void> {
    const stored = this.#records(agentContext).get(id);
    if (!stored || stored.type !== recordClass.type) throw new RecordNotFoundError(`record ${id} not found`, { recordType: recordClass.type });
    this.#records(agentContext).delete(id);
  }

  async getById(agentContext: AgentContext, recordClass: BaseRecordConstructor<T>, id: string): Promise<T> {
    const stored = this.#records(agentContext).get(id);
    if (!stored || stored.type !== recordClass.type) throw new RecordNotFoundError(`record ${id} not found`, { recordType: recordClass.type });
    return toInstance(stored, recordClass);
  }

  async getAll(agentContext: AgentContext, recordClass: BaseRecordConstructor<T>): Promise<T[]> {
    return [...this.#records(agentContext).values()].filter((r) => r.type === recordClass.type).map((r) => toInstance(r, recordClass));
  }

  async findByQuery(agentContext: AgentContext, recordClass: BaseRecordConstructor<T>, query: Query<T>, options: QueryOptions = {}): Promise<T[]> {
    const matching = [...this.#records(agentContext).values()].filter((r) => r.type === recordClass.type && matches(r.tags, query as QueryNode));
    const offset = options.offset ?? 0;
    const page = options.limit === undefined ? matching.slice(offset) : matching.slice(offset, offset + options.limit);
    return page.map((r) => toInstance(r, recordClass));
  }
}

type QueryNode = { $and?: QueryNode[]; $or?: QueryNode[]; $not?: QueryNode; [tag: string]: unknown };

export function matches(tags: TagsBase, query: QueryNode): boolean {
  for (const [key, value] of Object.entries(query)) {
    if (key === '$and') {
      if (!(value as QueryNode[]).every((q) => matches(tags, q))) return false;
    } else if (key === '$or') {
      if (!(value as QueryNode[]).some((q) => matches(tags, q))) return false;
    } else if (key === '$not') {
      if (value !== undefined && matches(tags, value as QueryNode)) return false;
    } else if (value === undefined) {
      continue;
    } else if (value === null) {
      if (tags[key] !== undefined && tags[key] !== null) return false;
    } else if (Array.isArray(value)) {
      const tag = tags[key];
      if (!Array.isArray(tag) || !value.every((v) => (tag as unknown[]).includes(v))) return false;
    } else if (tags[key] !== value) {
      return false;
    }
  }
  return true;
}

function toStored(record: BaseRecord<any, any, any>): StoredRecord {
  const value = JsonTransformer.toJSON(record) as Record<string, unknown>;
  const tags = structuredClone(Object.fromEntries(Object.entries(record.getTags()).filter(([, v]) => v !== undefined))) as TagsBase;
  return { id: record.id, type: record.type, value, tags };
}

function toInstance<T extends BaseRecord<any, any, any>>(stored: StoredRecord, recordClass: BaseRecordConstructor<T>): T {
  const instance = JsonTransformer.fromJSON(structuredClone(stored.value), recordClass) as T;
  instance.id = stored.id;
  instance.replaceTags(structuredClone(stored.tags));
  return instance;
}

// ---------------------------------------------------------------------------------------------
// did:web over http on loopback

/**
 * Credo's WebDidResolver (web-did-resolver) always builds an https URL and fetches with its own
 * cross-fetch. Our local runtime serves did:web documents over plain http on 127.0.0.1, so for a
 * loopback host this resolver fetches `http://<host:port>/<path>/did.json` itself (the did:web rule,
 * only the scheme differs); every other host goes to Credo's resolver unchanged (https).
 */
export class LoopbackWebDidResolver implements DidResolver {
  readonly supportedMethods = ['web'];
  // Tests re-publish DIDs; a cached document would hide that.
  readonly allowsCaching = false;
  readonly allowsLocalDidRecord = true;
  readonly #https = new WebDidResolver();

  async resolve(agentContext: AgentContext, did: string, parsed: ParsedDid, options: DidResolutionOptions): Promise<DidResolutionResult> {
    const [hostPart = '', ...pathParts] = parsed.id.split(':');
    const host = decodeURIComponent(hostPart);
    const url = `http://${host}/${pathParts.length > 0 ? `${pathParts.map(decodeURIComponent).join('/')}/did.json` : '.well-known/did.json'}`;
    if (!isLoopbackUrl(url)) return this.#https.resolve(agentContext, did, parsed, options);

    const notFound = (message: string): DidResolutionResult => ({ didDocument: null, didDocumentMetadata: {}, didResolutionMetadata: { error: 'notFound', message } });
    let json: { id?: unknown };
    try {
      const res = await agentContext.config.agentDependencies.fetch(url, { headers: { accept: 'application/did+json, application/json' } });
      if (!res.ok) return notFound(`GET ${url}: ${res.status}`);
      json = (await res.json()) as { id?: unknown };
    } catch (error) {
      return notFound(`GET ${url}: ${(error as Error).message}`);
    }
    if (json.id !== did) return notFound(`document id ${String(json.id)} is not ${did}`);
    return {
      didDocument: JsonTransformer.fromJSON(json, DidDocument),
      didDocumentMetadata: {},
      didResolutionMetadata: { contentType: 'application/did+json' },
    };
  }
}
