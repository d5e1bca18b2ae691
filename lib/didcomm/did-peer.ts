/**
 * did:peer for DIDComm v1 (DIF Peer DID Method spec): create did:peer:4 for our pairwise DIDs;
 * resolve the peer's did:peer:2 and :4, and take did:peer:1 or unqualified DIDs (older agents) with
 * the DID document they attach. Hand-written: the JS peer-DID libraries are either unmaintained
 * (@sicpa_open_source/peer-did-ts) or part of a framework (Credo); what is needed is small and pure.
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { decodeMultibaseKey } from '../dids/methods';
import { publicKeyFromVerkey, verkeyFromPublicKey, verkeyOfReference, x25519PublicFromEd25519 } from './envelope';

export interface DidcommService {
  id: string;
  /** `IndyAgent` services of older agents are reported as `did-communication`. */
  type: 'did-communication' | 'DIDCommMessaging';
  serviceEndpoint: string;
  /** As found in the document: did:key references, `#key-n` references or verkeys. */
  recipientKeys: string[];
  routingKeys: string[];
  /**
   * The recipient keys as Ed25519 verkeys, what a DIDComm v1 envelope is packed for (X25519
   * references map to the document's matching Ed25519 key). A DIDCommMessaging service lists none:
   * it gets the document's Ed25519 authentication keys.
   */
  recipientVerkeys: string[];
  /** The routing keys as verkeys (did:key references and plain verkeys; others are left out). */
  routingVerkeys: string[];
}

export interface ResolvedPeer {
  did: string;
  document: Record<string, unknown>;
  /** The Ed25519 authentication keys, as verkeys. */
  verkeys: string[];
  services: DidcommService[];
}

export type DidPeerErrorCode = 'invalid_did' | 'invalid_document' | 'unsupported' | 'unresolvable';

export class DidPeerError extends Error {
  constructor(
    readonly code: DidPeerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DidPeerError';
  }
}

/** Bounds on what a peer may send us: one DID or document, handled in bounded work. */
export const MAX_DID_LENGTH = 16 * 1024;
const MAX_METHODS = 20;
const MAX_SERVICES = 10;
const MAX_KEYS_PER_SERVICE = 20;

const B58 = '[1-9A-HJ-NP-Za-km-z]';
const PEER4_LONG = new RegExp(`^did:peer:4(z${B58}{46}):(z${B58}{6,})$`);
const PEER4_SHORT = new RegExp(`^did:peer:4(z${B58}{46})$`);
const PEER2 = /^did:peer:2((?:\.[AEVIDS][A-Za-z0-9_\-+/=]+)+)$/;

const JSON_MULTICODEC = [0x80, 0x04]; // varint of 0x0200

// ---------------------------------------------------------------------------------------------
// did:peer:4

function multihashSha256(text: string): string {
  const digest = createHash('sha256').update(text).digest();
  return `z${bs58.encode(Buffer.concat([Buffer.of(0x12, 0x20), digest]))}`;
}

/**
 * Our pairwise DID: one Ed25519 key (authentication, and the recipient key of a `did-communication`
 * service at `serviceEndpoint`). Both forms and the resolved document (with the long form as id).
 */
export function createDidPeer4(opts: { verkey: string; serviceEndpoint: string }): { longForm: string; shortForm: string; document: Record<string, unknown> } {
  try {
    publicKeyFromVerkey(opts.verkey);
  } catch {
    throw new DidPeerError('invalid_document', 'verkey is not a base58 Ed25519 key');
  }
  if (!/^https?:\/\/\S+$/.test(opts.serviceEndpoint)) throw new DidPeerError('invalid_document', 'serviceEndpoint must be an http(s) URL');
  // Ed25519VerificationKey2018/publicKeyBase58: what ACA-Py, Credo and older agents all read.
  const input = {
    '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/ed25519-2018/v1'],
    verificationMethod: [{ id: '#key-1', type: 'Ed25519VerificationKey2018', publicKeyBase58: opts.verkey }],
    authentication: ['#key-1'],
    service: [
      {
        id: '#didcomm-0',
        type: 'did-communication',
        serviceEndpoint: opts.serviceEndpoint,
        priority: 0,
        recipientKeys: ['#key-1'],
        routingKeys: [],
        accept: ['didcomm/aip1', 'didcomm/aip2;env=rfc19'],
      },
    ],
  };
  const encoded = `z${bs58.encode(Buffer.concat([Buffer.from(JSON_MULTICODEC), Buffer.from(JSON.stringify(input))]))}`;
  const shortForm = `did:peer:4${multihashSha256(encoded)}`;
  const longForm = `${shortForm}:${encoded}`;
  return { longForm, shortForm, document: peer4Document(longForm) };
}

/** The short form of a long-form did:peer:4 (undefined for anything else). */
export function shortFormOf(did: string): string | undefined {
  const match = PEER4_LONG.exec(did);
  return match ? `did:peer:4${match[1]}` : undefined;
}

function peer4Document(longForm: string): Record<string, unknown> {
  const match = PEER4_LONG.exec(longForm);
  if (!match) throw new DidPeerError('invalid_did', 'not a long-form did:peer:4');
  const [, hash, encoded] = match as unknown as [string, string, string];
  if (multihashSha256(encoded) !== hash) throw new DidPeerError('invalid_did', 'did:peer:4 hash does not match its document');
  const bytes = bs58.decode(encoded.slice(1));
  if (bytes[0] !== JSON_MULTICODEC[0] || bytes[1] !== JSON_MULTICODEC[1]) throw new DidPeerError('invalid_did', 'did:peer:4 document is not JSON-multicodec');
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes.subarray(2)).toString('utf8'));
  } catch {
    throw new DidPeerError('invalid_did', 'did:peer:4 document is not JSON');
  }
  if (!isObject(doc)) throw new DidPeerError('invalid_document', 'did:peer:4 document is not an object');
  const document: Record<string, unknown> = { ...doc, id: longForm, alsoKnownAs: [`did:peer:4${hash}`] };
  for (const relation of ['verificationMethod', 'authentication', 'assertionMethod', 'keyAgreement', 'capabilityInvocation', 'capabilityDelegation']) {
    const list = document[relation];
    if (Array.isArray(list)) document[relation] = list.map((m) => (isObject(m) && m.controller === undefined ? { ...m, controller: longForm } : m));
  }
  return document;
}

// ---------------------------------------------------------------------------------------------
// did:peer:2

const ABBREVIATIONS: Record<string, string> = { t: 'type', s: 'serviceEndpoint', r: 'routingKeys', a: 'accept', dm: 'DIDCommMessaging' };

function expand(value: unknown): unknown {
  if (typeof value === 'string') return ABBREVIATIONS[value] ?? value;
  if (Array.isArray(value)) return value.map(expand);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [ABBREVIATIONS[k] ?? k, expand(v)]));
  return value;
}

function peer2Document(did: string): Record<string, unknown> {
  const match = PEER2.exec(did);
  if (!match) throw new DidPeerError('invalid_did', 'not a did:peer:2');
  const entries = match[1]!.slice(1).split('.');
  const relations: Record<string, string> = { A: 'assertionMethod', E: 'keyAgreement', V: 'authentication', I: 'capabilityInvocation', D: 'capabilityDelegation' };
  const document: Record<string, unknown[]> & { id?: string } = { verificationMethod: [], service: [] };
  let keyIndex = 1;
  let serviceIndex = 0;
  for (const entry of entries) {
    const purpose = entry[0]!;
    const value = entry.slice(1);
    if (purpose === 'S') {
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
      } catch {
        throw new DidPeerError('invalid_did', 'did:peer:2 service is not base64url JSON');
      }
      for (const raw of Array.isArray(decoded) ? decoded : [decoded]) {
        if (!isObject(raw)) throw new DidPeerError('invalid_did', 'did:peer:2 service is not an object');
        const service = expand(raw) as Record<string, unknown>;
        // Credo numbers services `#<type>-<n>`; a service's own id, if any, is replaced the same way.
        document.service!.push({ ...service, id: `${did}#${String(service.type).toLowerCase()}-${serviceIndex++}` });
      }
      continue;
    }
    const key = multikey(value);
    if (!key) throw new DidPeerError('unsupported', 'did:peer:2 key is neither Ed25519 nor X25519');
    const id = `${did}#key-${keyIndex++}`;
    document.verificationMethod!.push(
      key.kind === 'Ed25519'
        ? { id, type: 'Ed25519VerificationKey2018', controller: did, publicKeyBase58: bs58.encode(key.bytes) }
        : { id, type: 'X25519KeyAgreementKey2019', controller: did, publicKeyBase58: bs58.encode(key.bytes) },
    );
    const relation = relations[purpose]!;
    (document[relation] ??= []).push(id);
  }
  return { '@context': ['https://www.w3.org/ns/did/v1'], id: did, ...document };
}

// ---------------------------------------------------------------------------------------------
// Resolution

/**
 * Resolves a did:peer:2 or :4. A short-form :4 resolves only with its long form known
 * (`opts.longForm`, e.g. from the connection record); did:peer:1 only with its attached document
 * (`resolveAttachedDidDoc`).
 */
export function resolveDidPeer(did: string, opts: { longForm?: string } = {}): ResolvedPeer {
  if (typeof did !== 'string' || did.length > MAX_DID_LENGTH) throw new DidPeerError('invalid_did', 'DID missing or too long');
  if (PEER4_LONG.test(did)) return summarize(did, peer4Document(did));
  if (PEER4_SHORT.test(did)) {
    if (!opts.longForm || shortFormOf(opts.longForm) !== did) throw new DidPeerError('unresolvable', 'a short-form did:peer:4 needs its long form');
    return summarize(opts.longForm, peer4Document(opts.longForm));
  }
  if (did.startsWith('did:peer:2')) return summarize(did, peer2Document(did));
  if (did.startsWith('did:peer:1') || did.startsWith('did:peer:0')) throw new DidPeerError('unresolvable', `${did.slice(0, 10)} resolves only with an attached DID document`);
  throw new DidPeerError('unsupported', 'not a did:peer:2 or :4');
}

/**
 * A DID with the document the peer attached (DID Exchange `did_doc~attach`, Connections 1.0
 * `DIDDoc`): did:peer:1 and unqualified DIDs of older agents. The document's `id`, when present,
 * must name the DID (with or without `did:sov:`). The attachment's signature, which binds the
 * document to the invitation key, is the protocol layer's to check.
 */
export function resolveAttachedDidDoc(did: string, doc: unknown): ResolvedPeer {
  if (typeof did !== 'string' || did.length === 0 || did.length > MAX_DID_LENGTH) throw new DidPeerError('invalid_did', 'DID missing or too long');
  if (!isObject(doc)) throw new DidPeerError('invalid_document', 'DID document is not an object');
  if (did.startsWith('did:peer:2') || did.startsWith('did:peer:4')) return resolveDidPeer(did);
  const bare = (s: string) => s.replace(/^did:sov:/, '');
  if (doc.id !== undefined && (typeof doc.id !== 'string' || bare(doc.id) !== bare(did))) throw new DidPeerError('invalid_document', 'DID document id does not name the DID');
  return summarize(did, { ...doc, id: did });
}

interface Key {
  kind: 'Ed25519' | 'X25519';
  bytes: Uint8Array;
}

function multikey(fingerprint: string): Key | undefined {
  const key = decodeMultibaseKey(fingerprint);
  return key && key.type !== 'P-256' ? { kind: key.type, bytes: key.raw } : undefined;
}

function methodKey(method: Record<string, unknown>): Key | undefined {
  const type = String(method.type);
  const kind = type.startsWith('Ed25519') ? 'Ed25519' : type.startsWith('X25519') ? 'X25519' : undefined;
  if (typeof method.publicKeyBase58 === 'string' && kind) {
    const bytes = safeB58(method.publicKeyBase58);
    return bytes?.length === 32 ? { kind, bytes } : undefined;
  }
  if (typeof method.publicKeyMultibase === 'string') {
    const key = multikey(method.publicKeyMultibase);
    // Ed25519VerificationKey2020 / X25519KeyAgreementKey2020 / Multikey all carry the multicodec.
    return key && (kind === undefined || kind === key.kind) ? key : undefined;
  }
  const jwk = method.publicKeyJwk;
  if (isObject(jwk) && jwk.kty === 'OKP' && (jwk.crv === 'Ed25519' || jwk.crv === 'X25519') && typeof jwk.x === 'string') {
    const bytes = Buffer.from(jwk.x, 'base64url');
    return bytes.length === 32 ? { kind: jwk.crv, bytes: new Uint8Array(bytes) } : undefined;
  }
  return undefined;
}

function safeB58(text: string): Uint8Array | undefined {
  try {
    return bs58.decode(text);
  } catch {
    return undefined;
  }
}

function summarize(did: string, document: Record<string, unknown>): ResolvedPeer {
  // Older documents call verification methods `publicKey`.
  const methods = [...asList(document.verificationMethod), ...asList(document.publicKey)];
  const embedded = ['authentication', 'keyAgreement', 'assertionMethod'].flatMap((r) => asList(document[r]).filter(isObject));
  if (methods.length + embedded.length > MAX_METHODS) throw new DidPeerError('invalid_document', `more than ${MAX_METHODS} verification methods`);

  const byId = new Map<string, Key>();
  const fragmentOf = (ref: string) => (ref.includes('#') ? ref.slice(ref.indexOf('#')) : ref);
  for (const m of [...methods, ...embedded]) {
    if (!isObject(m) || typeof m.id !== 'string') continue;
    const key = methodKey(m);
    if (key) {
      byId.set(m.id, key);
      byId.set(fragmentOf(m.id), key);
    }
  }
  const lookup = (ref: string): Key | undefined => byId.get(ref) ?? (ref.startsWith(`${did}#`) ? byId.get(fragmentOf(ref)) : undefined);

  const ed25519Keys = [...new Set([...byId.values()].filter((k) => k.kind === 'Ed25519').map((k) => verkeyFromPublicKey(k.bytes)))];
  /** An X25519 key maps to the document's Ed25519 key of the same curve point, as Credo does. */
  const edForX = (x: Uint8Array) => ed25519Keys.find((v) => Buffer.from(x25519PublicFromEd25519(publicKeyFromVerkey(v))).equals(Buffer.from(x)));

  const toVerkey = (ref: unknown): string | undefined => {
    if (typeof ref !== 'string') return undefined;
    if (ref.startsWith('did:key:')) return verkeyOfReference(ref);
    const key = lookup(ref);
    if (key) return key.kind === 'Ed25519' ? verkeyFromPublicKey(key.bytes) : edForX(key.bytes);
    return verkeyOfReference(ref); // a plain verkey
  };

  // Authentication keys (references or embedded, or `Ed25519SignatureAuthentication2018`'s publicKey).
  const verkeys = [
    ...new Set(
      asList(document.authentication)
        .map((a) => (typeof a === 'string' ? toVerkey(a) : isObject(a) ? (typeof a.publicKey === 'string' ? toVerkey(a.publicKey) : typeof a.id === 'string' ? toVerkey(a.id) : undefined) : undefined))
        .filter((v): v is string => v !== undefined),
    ),
  ];
  const authOrAll = verkeys.length > 0 ? verkeys : ed25519Keys;

  const rawServices = asList(document.service);
  if (rawServices.length > MAX_SERVICES) throw new DidPeerError('invalid_document', `more than ${MAX_SERVICES} services`);
  const services: DidcommService[] = [];
  for (const [index, s] of rawServices.entries()) {
    if (!isObject(s)) continue;
    const type = s.type === 'did-communication' || s.type === 'IndyAgent' ? 'did-communication' : s.type === 'DIDCommMessaging' ? 'DIDCommMessaging' : undefined;
    if (!type) continue;
    const endpoint = typeof s.serviceEndpoint === 'string' ? s.serviceEndpoint : isObject(s.serviceEndpoint) && typeof s.serviceEndpoint.uri === 'string' ? s.serviceEndpoint.uri : undefined;
    if (!endpoint) continue;
    const routing = isObject(s.serviceEndpoint) && Array.isArray(s.serviceEndpoint.routingKeys) ? s.serviceEndpoint.routingKeys : s.routingKeys;
    const recipientKeys = asList(s.recipientKeys).filter((k): k is string => typeof k === 'string');
    const routingKeys = asList(routing).filter((k): k is string => typeof k === 'string');
    if (recipientKeys.length > MAX_KEYS_PER_SERVICE || routingKeys.length > MAX_KEYS_PER_SERVICE) throw new DidPeerError('invalid_document', 'too many keys in a service');
    const recipientVerkeys = recipientKeys.length > 0 ? recipientKeys.map(toVerkey).filter((v): v is string => v !== undefined) : type === 'DIDCommMessaging' ? authOrAll : [];
    services.push({
      id: typeof s.id === 'string' ? s.id : `${did}#service-${index}`,
      type,
      serviceEndpoint: endpoint,
      recipientKeys,
      routingKeys,
      recipientVerkeys,
      routingVerkeys: routingKeys.map(toVerkey).filter((v): v is string => v !== undefined),
    });
  }
  // Lowest `priority` first, as RFC 0067 orders did-communication services.
  const priority = (svc: DidcommService) => {
    const p = (rawServices.find((r) => isObject(r) && r.id === svc.id) as Record<string, unknown> | undefined)?.priority;
    return typeof p === 'number' ? p : 0;
  };
  services.sort((a, b) => priority(a) - priority(b));
  return { did, document, verkeys: verkeys.length > 0 ? verkeys : ed25519Keys, services };
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
