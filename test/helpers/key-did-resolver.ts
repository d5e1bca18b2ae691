import { Resolver } from 'did-resolver';
import { getResolver } from 'key-did-resolver';

/** key-did-resolver 4.0.0 as an independent did:key reader. */
export const keyDidResolver = () => new Resolver(getResolver());

/**
 * key-did-resolver 4.0.0 writes a P-256 coordinate as the shortest big-endian number: a leading zero byte
 * (1 key in 128) is dropped, unlike RFC 7518 §6.2.1.2's full 32 bytes. Its coordinates are read back at full
 * length so that comparisons test the key, not that quirk.
 */
export function fullLengthJwk<T extends { x?: unknown; y?: unknown }>(jwk: T): T {
  const full = (c: unknown) => Buffer.from(Buffer.from(c as string, 'base64url').toString('hex').padStart(64, '0'), 'hex').toString('base64url');
  return { ...jwk, x: full(jwk.x), y: full(jwk.y) };
}
