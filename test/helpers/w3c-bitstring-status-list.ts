/**
 * A reader of W3C Bitstring Status List `encodedList` values written from the specification alone
 * (Bitstring Status List v1.1, "Validate Algorithm" and "Bitstring Expansion Algorithm"), kept
 * apart from lib/status-lists so that a misreading there is not copied here; and the published list
 * fetched and checked as a verifier does, for the tests that read a credential's status from it.
 */
import { gunzipSync } from 'node:zlib';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK } from 'jose';
import { resolveIssuerKey } from './issued-credentials';

export const MINIMUM_NUMBER_OF_ENTRIES = 131_072;

/** Error names from the specification's "Processing Errors" section. */
export class BitstringStatusListError extends Error {
  constructor(
    readonly code: 'MALFORMED_VALUE_ERROR' | 'STATUS_LIST_LENGTH_ERROR' | 'RANGE_ERROR',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** Bitstring Expansion Algorithm: multibase-decode (only the base64url-no-pad prefix `u` is allowed), then GUNZIP. */
export function expandBitstring(encodedList: string): Uint8Array {
  if (!encodedList.startsWith('u') || !/^[A-Za-z0-9_-]*$/.test(encodedList.slice(1))) {
    throw new BitstringStatusListError('MALFORMED_VALUE_ERROR', 'encodedList is not multibase base64url (prefix u)');
  }
  return new Uint8Array(gunzipSync(Buffer.from(encodedList.slice(1), 'base64url')));
}

/**
 * Validate Algorithm, from "Generate a revocation bitstring" on: the list must hold at least
 * 131,072 statuses of `statusSize` bits; a status is the `statusSize` bits starting at
 * `index * statusSize`, index 0 being the left-most bit of the bitstring, read left to right.
 */
export function decodeBitstringStatusList(encodedList: string, statusSize = 1): { entries: number; status(index: number): number } {
  const bitstring = expandBitstring(encodedList);
  const lengthInBits = bitstring.length * 8;
  if (lengthInBits / statusSize < MINIMUM_NUMBER_OF_ENTRIES) {
    throw new BitstringStatusListError('STATUS_LIST_LENGTH_ERROR', `${lengthInBits / statusSize} entries, fewer than ${MINIMUM_NUMBER_OF_ENTRIES}`);
  }
  return {
    entries: Math.floor(lengthInBits / statusSize),
    status(index: number): number {
      const position = index * statusSize;
      if (!Number.isInteger(index) || position < 0 || position + statusSize > lengthInBits) {
        throw new BitstringStatusListError('RANGE_ERROR', `index ${index} is outside the bitstring`);
      }
      let status = 0;
      for (let bit = position; bit < position + statusSize; bit++) {
        const leftToRight = (bitstring[Math.floor(bit / 8)]! >> (7 - (bit % 8))) & 1;
        status = status * 2 + leftToRight;
      }
      return status;
    },
  };
}

/** The payload of a published W3C list (a BitstringStatusListCredential secured as a VC-JWT). */
export interface PublishedStatusList {
  readonly id: string;
  readonly type: string[];
  readonly issuer: string;
  readonly credentialSubject: { readonly statusPurpose: string; readonly encodedList: string };
}

/**
 * The list a credential's `statusListCredential` URL serves, read as a verifier reads it: 200 with
 * `application/vc+jwt`, the JWS checked with the issuer key its `kid` names (DID documents from
 * `resolverBase`'s resolver, did:web from its did.json), a BitstringStatusListCredential whose id is
 * the URL. Throws on any of these failing.
 */
export async function fetchPublishedStatusList(url: string, resolverBase: string): Promise<PublishedStatusList> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  const type = res.headers.get('content-type');
  if (type !== 'application/vc+jwt') throw new Error(`GET ${url}: content-type ${type}, not application/vc+jwt`);
  const token = await res.text();
  const header = decodeProtectedHeader(token);
  const { jwk } = await resolveIssuerKey(resolverBase, String(header.kid));
  await compactVerify(token, await importJWK(jwk, String(header.alg)));
  const payload = decodeJwt(token) as unknown as PublishedStatusList;
  if (payload.id !== url) throw new Error(`the list at ${url} names itself ${payload.id}`);
  if (!payload.type?.includes('BitstringStatusListCredential')) throw new Error(`the list at ${url} is no BitstringStatusListCredential`);
  return payload;
}

/** The status at `index` of the list published at `url` ({@link fetchPublishedStatusList}, then the Validate Algorithm). */
export async function publishedStatus(url: string, index: number, resolverBase: string): Promise<number> {
  return decodeBitstringStatusList((await fetchPublishedStatusList(url, resolverBase)).credentialSubject.encodedList).status(index);
}
