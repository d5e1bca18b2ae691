import { deflateSync, gzipSync } from 'node:zlib';

export const STATUS_SIZES = [1, 2, 4, 8] as const;
export type StatusSize = (typeof STATUS_SIZES)[number];
/** Non-zero statuses of one list: index → value (0 < value < 2**statusSize). Indexes not listed are 0. */
export type StatusEntries = Iterable<readonly [number, number]>;
export interface ListShape {
  readonly listSize: number;
  readonly statusSize: StatusSize;
}

/** W3C Bitstring Status List: verifiers refuse a list of fewer entries (STATUS_LIST_LENGTH_ERROR), whatever the status size. */
export const W3C_MIN_ENTRIES = 131_072;

// Both formats are compressed with node:zlib; the tests read the IETF list with
// @sd-jwt/jwt-status-list (pako), so two independent implementations must agree.
// Level 9: the IETF draft recommends the highest compression (lists are signed once, fetched often).
const LEVEL = { level: 9 } as const;

/**
 * W3C Bitstring Status List: the bitstring (left-most bit of byte 0 is index 0), GZIP-compressed,
 * multibase base64url ('u' + base64url, no padding). A shorter list is padded with zero entries up
 * to the 131,072 entries the Validate Algorithm demands.
 */
export function w3cEncodedList(shape: ListShape, entries: StatusEntries): string {
  const bytes = pack(shape, Math.max(shape.listSize, W3C_MIN_ENTRIES), entries, 'msb-first');
  return `u${gzipSync(bytes, LEVEL).toString('base64url')}`;
}

/**
 * IETF Token Status List: `{bits, lst}` — byte array (index 0 at the least significant bits of
 * byte 0), DEFLATE with the ZLIB format (RFC 1950), base64url without padding.
 */
export function ietfStatusList(shape: ListShape, entries: StatusEntries): { bits: StatusSize; lst: string } {
  const bytes = pack(shape, shape.listSize, entries, 'lsb-first');
  return { bits: shape.statusSize, lst: deflateSync(bytes, LEVEL).toString('base64url') };
}

/**
 * The two formats differ only in where a status sits inside its byte. W3C reads the bitstring from
 * the left: status i occupies bits i*size .. i*size+size-1 counted from the most significant bit,
 * its value written most significant bit first (as the bitstring itself is read). IETF counts from
 * the least significant bit: status i is bits (i*size mod 8) .. +size-1 of its byte, as an integer.
 * Sizes divide 8, so a status never straddles two bytes.
 */
function pack(shape: ListShape, slots: number, entries: StatusEntries, order: 'msb-first' | 'lsb-first'): Uint8Array {
  const { listSize, statusSize } = shape;
  if (!(STATUS_SIZES as readonly number[]).includes(statusSize)) throw new RangeError(`statusSize must be one of ${STATUS_SIZES.join(', ')}, not ${statusSize}`);
  if (!Number.isSafeInteger(listSize) || listSize < 1) throw new RangeError(`listSize must be a positive integer, not ${listSize}`);
  const bytes = new Uint8Array(Math.ceil((slots * statusSize) / 8));
  const perByte = 8 / statusSize;
  const maxValue = 2 ** statusSize - 1;
  for (const [index, value] of entries) {
    if (!Number.isInteger(index) || index < 0 || index >= listSize) throw new RangeError(`status index ${index} is outside [0, ${listSize})`);
    if (!Number.isInteger(value) || value < 1 || value > maxValue) throw new RangeError(`status value ${value} at index ${index} is outside [1, ${maxValue}]`);
    const byte = Math.floor(index / perByte);
    const slot = index % perByte;
    const shift = order === 'lsb-first' ? slot * statusSize : 8 - (slot + 1) * statusSize;
    // Clear first: an index listed twice keeps its last value instead of OR-ing both.
    bytes[byte] = (bytes[byte]! & ~(maxValue << shift)) | (value << shift);
  }
  return bytes;
}
