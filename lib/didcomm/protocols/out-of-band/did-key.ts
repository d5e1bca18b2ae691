import bs58 from 'bs58';
import { multibaseKey } from '../../../dids/methods';

/** The verkey as a did:key (Ed25519, multicodec 0xed), as RFC 0434 inline services name recipient keys. */
export function didKeyOfVerkey(verkey: string): string {
  return `did:key:${multibaseKey({ kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bs58.decode(verkey)).toString('base64url') } as never)}`;
}

/** The verkey of an Ed25519 did:key (with or without a `#fragment`); null for anything else. */
export function verkeyOfDidKey(didKey: string): string | null {
  const m = /^did:key:z([1-9A-HJ-NP-Za-km-z]{40,60})(?:#.*)?$/.exec(didKey);
  if (!m) return null;
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(m[1]!);
  } catch {
    return null;
  }
  return bytes.length === 34 && bytes[0] === 0xed && bytes[1] === 0x01 ? bs58.encode(bytes.subarray(2)) : null;
}
