// AnonCreds object identifiers of the did:web AnonCreds method (2060-io/did-web-anoncreds-method,
// listed in hyperledger/anoncreds-methods-registry; read by Credo's DidWebAnonCredsRegistry,
// 2060-io/credo-ts-didweb-anoncreds): `<did>?service=anoncreds&relativeRef=/<type>/<resource id>`, the
// resource id being base58(SHA-256(JCS(object))). A resolver fetches `<service endpoint><relativeRef>`
// and refuses an object whose hash is not the id, so every published object is immutable by design.
import { createHash } from 'node:crypto';
import bs58 from 'bs58';

/** The fragment of the DID document's AnonCreds service (`<did>#anoncreds`). */
export const ANONCREDS_SERVICE = 'anoncreds';

/** The object paths, as Credo's did:web registry names them when it registers objects. */
export const OBJECT_PATHS = { schema: 'schema', credDef: 'credDef', revRegDef: 'revRegDef' } as const;
export type ObjectType = keyof typeof OBJECT_PATHS;

/** base58 of 32 bytes: 43 or 44 characters (a leading zero byte could make it shorter; allow 32–44). */
export const RESOURCE_ID = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * RFC 8785 JSON Canonicalization for the values AnonCreds objects hold (strings, arrays, objects;
 * numbers as ECMAScript prints them, which is what JCS requires): keys sorted by UTF-16 code units
 * (`Array.prototype.sort`'s default order) and strings escaped as JSON.stringify does. Hand-written:
 * `canonicalize` is only a transitive dependency here (the unit test checks the two agree).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('JCS has no form for a non-finite number');
  return JSON.stringify(value);
}

/** The did:web AnonCreds method's resource id of an object: base58(SHA-256(JCS(object))). */
export function resourceIdOf(object: unknown): string {
  return bs58.encode(createHash('sha256').update(canonicalJson(object), 'utf8').digest());
}

/** `<did>?service=anoncreds&relativeRef=/<path>/<resource id>` */
export function objectId(issuerDid: string, type: ObjectType, resourceId: string): string {
  return `${issuerDid}?service=${ANONCREDS_SERVICE}&relativeRef=/${OBJECT_PATHS[type]}/${resourceId}`;
}

/**
 * The DID and resource id of an object id of ours, or null when `id` is not of that exact form (any
 * other service, path, parameter or encoding is not an id this service issued).
 */
export function parseObjectId(id: string, type: ObjectType): { did: string; resourceId: string } | null {
  const marker = `?service=${ANONCREDS_SERVICE}&relativeRef=/${OBJECT_PATHS[type]}/`;
  const at = id.indexOf(marker);
  if (at < 1) return null;
  const did = id.slice(0, at);
  const resourceId = id.slice(at + marker.length);
  if (!/^did:web:[!-~]+$/.test(did) || did.includes('?') || !RESOURCE_ID.test(resourceId)) return null;
  return { did, resourceId };
}

/** The service endpoint of a did:web DID of this service: `<base URL>/dids/<id>/anoncreds`. */
export function anoncredsEndpoint(baseUrl: string, didWebId: string): string {
  return `${baseUrl}/dids/${didWebId}/${ANONCREDS_SERVICE}`;
}

/** Where a resolver fetches an object: the service endpoint followed by the relativeRef. */
export function objectUrl(baseUrl: string, didWebId: string, type: ObjectType, resourceId: string): string {
  return `${anoncredsEndpoint(baseUrl, didWebId)}/${OBJECT_PATHS[type]}/${resourceId}`;
}

/** The last segment of a did:web DID of this service (`did:web:<host>:dids:<id>`). */
export function didWebIdOf(did: string): string {
  return did.slice(did.lastIndexOf(':') + 1);
}

/**
 * A registry's status list endpoint (the revocation registry definition's `resourceMetadata`):
 * `<endpoint>/<timestamp>` answers the list in force at that time (did:web AnonCreds method).
 */
export function statusListEndpoint(baseUrl: string, didWebId: string, revRegResourceId: string): string {
  return `${anoncredsEndpoint(baseUrl, didWebId)}/revStatus/${revRegResourceId}`;
}

/** The tails file's public URL, named by its hash (a registry definition's `tailsLocation`). */
export function tailsUrl(baseUrl: string, didWebId: string, tailsHash: string): string {
  return `${anoncredsEndpoint(baseUrl, didWebId)}/tails/${tailsHash}`;
}
