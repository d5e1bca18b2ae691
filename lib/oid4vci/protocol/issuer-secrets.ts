import { createECDH, createHmac, createPrivateKey, hkdfSync, randomBytes, sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import { memo } from '../../memo';
import type { SecretDeriver } from '../../secrets/port';
import type { PublicJwk } from '../../keys/port';

/**
 * A wallet's issuer secrets, derived from the service's MAC key (KMS GenerateMac deployed) and never
 * stored: the ES256 key that signs its access tokens, and the key that MACs its c_nonces. One MAC per
 * function instance (`oid4vci/v1`), then HKDF per wallet: a caller naming many wallets costs no KMS call.
 *
 * Access tokens are verified by the same service that issues them, so their key needs no KMS Sign
 * round-trip and no published JWKS; a per-wallet key means a token of one wallet's issuer is
 * worthless at another's even before its `aud` is checked. Credentials are still signed only in KMS.
 */
export interface IssuerSecrets {
  readonly tokenKey: { readonly privateKey: KeyObject; readonly publicJwk: PublicJwk & { kid: string } };
  readonly nonceKey: Buffer;
}

const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

export class IssuerSecretSource {
  /** Per wallet: one ECDH and key import, then kept. */
  readonly of: (walletId: string) => Promise<IssuerSecrets> = memo((walletId: string) => this.derive(walletId), 2000);

  constructor(private readonly secrets: SecretDeriver) {}

  private async derive(walletId: string): Promise<IssuerSecrets> {
    const root = Buffer.from(await this.secrets.derive('oid4vci/v1'));
    const master = Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `wallet/${walletId}`, 32));
    const nonceKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'c_nonce', 32));
    // A P-256 private scalar from the secret: retried with a counter in the (2^-32) case it is out of range.
    let d: Buffer;
    for (let i = 0; ; i++) {
      d = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `access-token-key/${i}`, 32));
      const n = BigInt(`0x${d.toString('hex')}`);
      if (n > 0n && n < P256_ORDER) break;
    }
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(d);
    const point = ecdh.getPublicKey();
    const x = point.subarray(1, 33).toString('base64url');
    const y = point.subarray(33).toString('base64url');
    const privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url') }, format: 'jwk' });
    return { tokenKey: { privateKey, publicJwk: { kty: 'EC', crv: 'P-256', x, y, kid: 'at-1' } }, nonceKey };
  }
}

export function es256Sign(key: KeyObject, data: Uint8Array): Buffer {
  return sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
}

/**
 * c_nonce: `<128 random bits>.<expiry, epoch seconds>.<MAC>`. Checking authenticity and expiry costs
 * no read; single use is enforced where it is spent (a conditional put of its hash).
 */
export function mintNonce(nonceKey: Buffer, expiresAtSeconds: number): string {
  const body = `${randomBytes(16).toString('base64url')}.${expiresAtSeconds.toString(36)}`;
  return `${body}.${createHmac('sha256', nonceKey).update(body).digest().subarray(0, 16).toString('base64url')}`;
}

/** The nonce's expiry (epoch seconds) if it is one of ours, else null. */
export function nonceExpiry(nonceKey: Buffer, nonce: string): number | null {
  const parts = nonce.split('.');
  if (parts.length !== 3 || nonce.length > 200) return null;
  const expected = createHmac('sha256', nonceKey).update(`${parts[0]}.${parts[1]}`).digest().subarray(0, 16);
  const given = Buffer.from(parts[2]!, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const exp = parseInt(parts[1]!, 36);
  return Number.isFinite(exp) ? exp : null;
}
