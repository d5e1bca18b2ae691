/**
 * A reader of W3C Bitstring Status List `encodedList` values written from the specification alone
 * (Bitstring Status List v1.1, "Validate Algorithm" and "Bitstring Expansion Algorithm"), kept
 * apart from lib/status-lists so that a misreading there is not copied here.
 */
import { gunzipSync } from 'node:zlib';

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
