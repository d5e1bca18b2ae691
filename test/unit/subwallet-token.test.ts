import { SignJWT, UnsecuredJWT } from 'jose';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { SubwalletTokens, TOKEN_TTL_SECONDS } from '../../lib/tenancy/subwallet-token';

const secrets = new LocalSecretDeriver('11'.repeat(32));

describe('subwallet tokens', () => {
  test('a minted token verifies to its wallet until it expires', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const tokens = new SubwalletTokens(secrets, () => now);
    const t = await tokens.mint('42');
    expect(await tokens.verify(t)).toEqual({ walletId: '42', expiresAt: new Date(now.getTime() + TOKEN_TTL_SECONDS * 1000).toISOString() });
    now = new Date(now.getTime() + (TOKEN_TTL_SECONDS + 1) * 1000);
    expect(await tokens.verify(t)).toBeNull();
  });

  test('a token under another secret, an unsecured token or a token of another type is refused', async () => {
    const tokens = new SubwalletTokens(secrets);
    const other = new SubwalletTokens(new LocalSecretDeriver('22'.repeat(32)));
    expect(await tokens.verify(await other.mint('42'))).toBeNull();
    const unsecured = new UnsecuredJWT({ wallet_id: '42' }).setIssuer('credential-service').setAudience('credential-service/api').encode();
    expect(await tokens.verify(unsecured)).toBeNull();
    const key = await secrets.derive('subwallet-token/v1');
    const wrongTyp = await new SignJWT({ wallet_id: '42' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer('credential-service')
      .setAudience('credential-service/api')
      .setExpirationTime('1h')
      .sign(key);
    expect(await tokens.verify(wrongTyp)).toBeNull();
    expect(await tokens.verify('not-a-token')).toBeNull();
  });
});
