import { SignJWT, jwtVerify, errors } from 'jose';
import type { SecretDeriver } from '../secrets/port';

/**
 * The subwallet `token` of the contract: a short-lived (1 h) HS256 JWT that acts for one wallet with
 * the admin role. It is minted afresh whenever the super-admin creates, lists or reads a subwallet,
 * so a listing never leaks a long-lived secret. It is accepted wherever a wallet API key is (in the
 * x-api-key header), which lets the platform team act inside a tenant without creating a key.
 */
export const TOKEN_TTL_SECONDS = 3600;
const ISSUER = 'credential-service';
const AUDIENCE = 'credential-service/api';
const TYP = 'subwallet+jwt';
export const JWT_SHAPE = /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/;

export class SubwalletTokens {
  constructor(
    private readonly secrets: SecretDeriver,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async mint(walletId: string): Promise<string> {
    const key = await this.secrets.derive('subwallet-token/v1');
    const iat = Math.floor(this.now().getTime() / 1000);
    return new SignJWT({ wallet_id: walletId, roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256', typ: TYP })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(`wallet:${walletId}`)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_TTL_SECONDS)
      .sign(key);
  }

  /** The wallet the token acts for and when it expires, or null when it is not a valid, unexpired token. */
  async verify(token: string): Promise<{ walletId: string; expiresAt: string } | null> {
    if (!JWT_SHAPE.test(token)) return null;
    const key = await this.secrets.derive('subwallet-token/v1');
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        typ: TYP,
        currentDate: this.now(),
      });
      if (typeof payload.wallet_id !== 'string' || typeof payload.exp !== 'number') return null;
      return { walletId: payload.wallet_id, expiresAt: new Date(payload.exp * 1000).toISOString() };
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
