import { jest } from '@jest/globals';
import { CompactSign, decodeJwt } from 'jose';
import { Oauth2ResourceUnauthorizedError } from '@openid4vc/oauth2';
import { ValidationError as LibraryValidationError } from '@openid4vc/utils';
import { keys } from '../../lib/store/keys';
import { draftFromJwt, draftFromSdJwt } from '../../lib/oid4vci/supported';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { errorDescription, ProtocolError } from '../../lib/http/errors';
import { toProtocolError } from '../../lib/oid4vci/protocol/service';
import { nonceExpiry } from '../../lib/oid4vci/protocol/issuer-secrets';
import type { WriteOp } from '../../lib/store/port';
import { failWrites, laggingReads, raceBefore } from '../helpers/store-hooks';
import { MemoryStore } from '../helpers/memory-store';
import { SpecWallet } from '../helpers/spec-wallet';
import { ISSUER, oid4vciFixture, scope } from '../helpers/oid4vci-fixture';

/**
 * The issuer's refusals that the HTTP suites do not reach, in-process: each one the protocol's code,
 * nothing issued, and the exchange left as it should be.
 */

const refused = (code: string, status = 400) => expect.objectContaining({ status, code });
/** A refusal with its description (error_description): what the wallet is told. */
const told = (status: number, code: string, message: string) => expect.objectContaining({ status, code, message });
const dpopWallet = () => new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1', dpop: true });

async function redeemed(opts: { now?: () => Date } = {}) {
  const f = await oid4vciFixture(opts);
  const { code, exchangeId } = await f.offer();
  const t = (await f.token(code)) as { access_token: string; c_nonce: string };
  const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
  return { f, exchangeId, accessToken: t.access_token, nonce: t.c_nonce, wallet, proof: (o: Record<string, unknown> = {}) => wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey(), ...o }) };
}

/** The notification endpoint under the exchange's access token (a Bearer token). */
const notifier = (r: Pick<Awaited<ReturnType<typeof redeemed>>, 'f' | 'accessToken'>) => (body: Record<string, unknown>) =>
  r.f.protocol.notification(scope, ISSUER, r.f.request('notification', { authorization: `Bearer ${r.accessToken}` }), body as never);
const issueOne = (r: Awaited<ReturnType<typeof redeemed>>) => r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } }) as Promise<{ notification_id: string }>;

/** A clock fixed per test at the second it starts: proofs made without an explicit iat take Date.now(), which must stay near it. */
let T = 0;
beforeEach(() => {
  T = Math.floor(Date.now() / 1000);
});
const at = () => new Date(T * 1000);

describe('the token endpoint', () => {
  test('refuses grants other than the pre-authorized code, and headers that are not visible ASCII', async () => {
    const f = await oid4vciFixture();
    const { code } = await f.offer();
    await expect(f.token(code, { form: { grant_type: 'authorization_code', code: 'x' } })).rejects.toEqual(refused('unsupported_grant_type'));
    await expect(f.token(code, { headers: { dpop: 'é.x.y' } })).rejects.toEqual(refused('invalid_request'));
  });

  test('a DPoP proof is fresh and used once: a stale one, and the same one again, are invalid_dpop_proof', async () => {
    const f = await oid4vciFixture();
    const wallet = dpopWallet();
    const stale = wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token`, iat: Math.floor(Date.now() / 1000) - 3600 });
    await expect(f.token((await f.offer()).code, { headers: { dpop: stale } })).rejects.toEqual(refused('invalid_dpop_proof'));
    const proof = wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token` });
    await expect(f.token((await f.offer()).code, { headers: { dpop: proof } })).resolves.toMatchObject({ token_type: 'DPoP' });
    const second = await f.offer();
    await expect(f.token(second.code, { headers: { dpop: proof } })).rejects.toEqual(expect.objectContaining({ status: 400, code: 'invalid_dpop_proof', message: 'The DPoP proof was already used' }));
    expect((await f.exchange(second.exchangeId)).state).toBe('offer');
  });

  test("a DPoP proof whose header or claims are not a DPoP proof's: invalid_dpop_proof (RFC 9449 §5), the code unspent, no PIN attempt used", async () => {
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer({ pin: '4711' });
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwk = dpopWallet().makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token` }).split('.')[0]!;
    for (const dpop of [`${b64({ alg: 'ES256', jwk: JSON.parse(Buffer.from(jwk, 'base64url').toString()).jwk })}.${b64({ htm: 'POST', htu: `${ISSUER}/token`, iat: 1, jti: 'j' })}.c2ln`, `${jwk}.${b64({ htm: 'POST' })}.c2ln`]) {
      await expect(f.token(code, { txCode: '4711', headers: { dpop } })).rejects.toEqual(expect.objectContaining({ status: 400, code: 'invalid_dpop_proof', message: expect.stringMatching(/^Error validating schema/) }));
    }
    expect((await f.store.get(oid4vciKeys.exchange(scope, exchangeId)))!).toMatchObject({ state: 'offer' });
    expect((await f.store.get(oid4vciKeys.exchange(scope, exchangeId)))!.tx_code_attempts).toBeUndefined();
    await expect(f.token(code, { txCode: '4711' })).resolves.toHaveProperty('access_token');
  });

  test('the lock-out comes at exactly the fifth wrong PIN, with the attempts left said before it', async () => {
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer({ pin: '4711' });
    const messages: string[] = [];
    for (let i = 0; i < 5; i++) messages.push(await f.token(code, { txCode: `000${i}` }).then(() => 'redeemed', (e: Error) => e.message));
    expect(messages).toEqual([
      'Invalid tx_code (4 attempt(s) left)',
      'Invalid tx_code (3 attempt(s) left)',
      'Invalid tx_code (2 attempt(s) left)',
      'Invalid tx_code (1 attempt(s) left)',
      'Invalid tx_code; no attempts are left and the pre-authorized code is no longer valid',
    ]);
    expect(await f.exchange(exchangeId)).toMatchObject({ state: 'failed', failure_reason: 'tx_code_attempts_exhausted' });
    expect(f.events('oid4vci.exchange.failed')).toHaveLength(1);
  });
});

describe('what a wallet is told when the token endpoint refuses (error_description)', () => {

  test('another grant: which grant this issuer serves', async () => {
    const f = await oid4vciFixture();
    const { code } = await f.offer();
    await expect(f.token(code, { form: { grant_type: 'authorization_code', code: 'x' } })).rejects.toEqual(
      told(400, 'unsupported_grant_type', 'Only the pre-authorized code grant is supported'),
    );
  });

  test('an unknown code, and a code already redeemed: unknown or already used', async () => {
    const f = await oid4vciFixture();
    const { code } = await f.offer();
    await expect(f.token('not-a-code')).rejects.toEqual(told(400, 'invalid_grant', 'Unknown or already used pre-authorized code'));
    await f.token(code);
    await expect(f.token(code)).rejects.toEqual(told(400, 'invalid_grant', 'Unknown or already used pre-authorized code'));
  });

  test('a code still stored but whose exchange is no longer an offer: unknown or already used', async () => {
    // The code's lookup item outlives its redemption here (put back by hand), so the state check is what refuses.
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer();
    const lookup = (await f.store.get(oid4vciKeys.code(scope, code)))!;
    await f.token(code);
    await f.store.write([{ type: 'put', item: lookup }]);
    await expect(f.token(code)).rejects.toEqual(told(400, 'invalid_grant', 'Unknown or already used pre-authorized code'));
    expect((await f.exchange(exchangeId)).state).toBe('redeemed');
  });

  test('an expired code: it has expired (not "unknown"), and the exchange is expired', async () => {
    let now = Date.now();
    const f = await oid4vciFixture({ now: () => new Date(now) });
    const { code, exchangeId } = await f.offer();
    now += 31 * 24 * 3600 * 1000;
    await expect(f.token(code)).rejects.toEqual(told(400, 'invalid_grant', 'The pre-authorized code has expired'));
    expect((await f.exchange(exchangeId)).state).toBe('expired');
  });

  test('a PIN-protected offer redeemed without tx_code: invalid_request, and no attempt is counted (§6.3)', async () => {
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer({ pin: '4711' });
    await expect(f.token(code)).rejects.toEqual(told(400, 'invalid_request', "Missing required 'tx_code' in request"));
    expect(await f.exchange(exchangeId)).toMatchObject({ state: 'offer' });
    expect((await f.exchange(exchangeId)).tx_code_attempts ?? 0).toBe(0);
    await expect(f.token(code, { txCode: '4711' })).resolves.toMatchObject({ token_type: 'Bearer' });
  });

  test('a tx_code sent for an offer that has none is invalid_request (OID4VCI 1.0 §6.3), and the code stays redeemable', async () => {
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer();
    for (const txCode of ['4711', '']) {
      await expect(f.token(code, { txCode })).rejects.toEqual(told(400, 'invalid_request', "Request contains 'tx_code' that was not expected"));
    }
    expect((await f.exchange(exchangeId)).state).toBe('offer');
    await expect(f.token(code)).resolves.toMatchObject({ token_type: 'Bearer' });
  });

  test("a store failure while counting a PIN is the store's error (a 5xx), not invalid_grant", async () => {
    class FailingCounter extends MemoryStore {
      override async increment(): Promise<number> {
        throw new Error('store unavailable');
      }
    }
    const f = await oid4vciFixture({ store: new FailingCounter() });
    const { code, exchangeId } = await f.offer({ pin: '4711' });
    const failure = await f.token(code, { txCode: '4711' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(ProtocolError);
    expect((failure as Error).message).toBe('store unavailable');
    expect((await f.exchange(exchangeId)).state).toBe('offer');
  });

  test.each([
    ['the right PIN', '4711'],
    ['a wrong PIN', '0000'],
  ])('%s, guessed at an exchange that stopped being an offer meanwhile: unknown or already used, and not counted', async (_name, txCode) => {
    class LateRedemption extends MemoryStore {
      override async increment(...args: Parameters<MemoryStore['increment']>): Promise<number> {
        const [key] = args;
        const item = (await this.get(key))!;
        await this.write([{ type: 'put', item: { ...item, state: 'redeemed' } }]);
        return super.increment(...args);
      }
    }
    const f = await oid4vciFixture({ store: new LateRedemption() });
    const { code, exchangeId } = await f.offer({ pin: '4711' });
    await expect(f.token(code, { txCode })).rejects.toEqual(told(400, 'invalid_grant', 'Unknown or already used pre-authorized code'));
    expect((await f.exchange(exchangeId)).tx_code_attempts ?? 0).toBe(0);
  });
});

describe('the credential endpoint', () => {
  test('requests it does not serve: credential identifiers, encrypted responses, more than ten proofs, no proof', async () => {
    const r = await redeemed();
    await expect(r.f.credential(r.accessToken, { credential_identifier: 'x', proofs: { jwt: [r.proof()] } })).rejects.toEqual(refused('unknown_credential_identifier'));
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] }, credential_response_encryption: { jwk: {}, enc: 'A128GCM' } })).rejects.toEqual(refused('invalid_encryption_parameters'));
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: Array.from({ length: 11 }, () => r.proof()) } })).rejects.toEqual(refused('invalid_credential_request'));
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid' })).rejects.toEqual(
      expect.objectContaining({ status: 400, code: 'invalid_proof', message: 'A jwt proof of possession of the holder key is required' }),
    );
    await expect(r.f.credential(r.accessToken, { format: 'vc+sd-jwt', vct: 'urn:other', proof: { proof_type: 'jwt', jwt: r.proof() } })).rejects.toEqual(refused('unknown_credential_configuration'));
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
  });

  test('proofs: without iat, with an expired nonce, or with a binding the configuration does not list', async () => {
    let now = Date.now();
    const r = await redeemed({ now: () => new Date(now) });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ payload: { iat: undefined } })] } })).rejects.toEqual(refused('invalid_proof'));
    const jwkOnly = await r.f.supported.create(scope, draftFromSdJwt({ id: 'JwkOnly', vct: 'urn:j', claims: { given_name: { value_type: 'string' } }, cryptographic_binding_methods_supported: ['jwk'] }));
    const offer = await r.f.offer({ supported_cred_id: jwkOnly.supported_cred_id });
    const t = (await r.f.token(offer.code)) as { access_token: string; c_nonce: string };
    const didProof = r.wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: r.wallet.newHolderKey(), binding: 'did:key' });
    await expect(r.f.credential(t.access_token, { credential_configuration_id: 'JwkOnly', proofs: { jwt: [didProof] } })).rejects.toEqual(refused('invalid_proof'));
    // Ten minutes on, the first token's c_nonce (5 minutes) has expired: presented with a fresh token.
    now += 10 * 60 * 1000;
    const late = await r.f.offer();
    const lt = (await r.f.token(late.code)) as { access_token: string };
    await expect(r.f.credential(lt.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } })).rejects.toEqual(refused('invalid_nonce'));
  });

  test("a proof whose jwk header holds the private key is invalid_proof (Appendix F.4), and issues nothing", async () => {
    const r = await redeemed();
    const key = r.wallet.newHolderKey();
    const { d } = key.privateKey.export({ format: 'jwk' }) as { d: string };
    const leaky = r.wallet.makeProof({ aud: ISSUER, nonce: r.nonce, key, header: { jwk: { ...key.publicJwk, d } } });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [leaky] } })).rejects.toMatchObject({
      code: 'invalid_proof',
      message: expect.stringContaining('private key members (d)'),
    });
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
  });

  test('a proof without a nonce is invalid_proof; a c_nonce already spent by another exchange is invalid_nonce (§8.3.1.2)', async () => {
    const a = await redeemed();
    const bare = a.wallet.makeProof({ aud: ISSUER, key: a.wallet.newHolderKey() });
    await expect(a.f.credential(a.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [bare] } })).rejects.toMatchObject({ code: 'invalid_proof', message: expect.stringContaining('no nonce') });
    const nonce = (await a.f.protocol.nonce(scope)).c_nonce;
    await a.f.credential(a.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [a.proof({ nonce })] } });
    // A second exchange of the same issuer, its proof made with the nonce the first one spent.
    const offer = await a.f.offer();
    const t = (await a.f.token(offer.code)) as { access_token: string };
    const replay = a.wallet.makeProof({ aud: ISSUER, nonce, key: a.wallet.newHolderKey() });
    await expect(a.f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [replay] } })).rejects.toMatchObject({ code: 'invalid_nonce', message: expect.stringContaining('already used') });
    expect((await a.f.exchange(offer.exchangeId)).state).toBe('redeemed');
  });

  test("an access token signed with this issuer's key but naming another token id, configuration or issuer DID than its exchange is invalid_token", async () => {
    const r = await redeemed();
    // The fixture's secret deriver: this is the issuer's own token key, so only the claims differ.
    const { tokenKey } = await r.f.secrets.of(scope.walletId);
    const [h, p] = r.accessToken.split('.') as [string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    // The token names its configuration (scd) and issuer DID (idid) besides sub and jti.
    expect(payload).toMatchObject({ sub: r.exchangeId, jti: expect.any(String), scd: expect.any(String), idid: expect.any(String) });
    const sign = (claims: Record<string, unknown>) => new CompactSign(new TextEncoder().encode(JSON.stringify({ ...payload, ...claims }))).setProtectedHeader(header).sign(tokenKey.privateKey);
    // ... or missing one of them, or not as a string (a token of another version, say; a missing jti the library refuses itself).
    const changes = [{ jti: 'urn:uuid:00000000-0000-4000-8000-000000000000' }, { scd: 'Other' }, { idid: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK' }, { scd: undefined }, { idid: 5 }, { idid: ['x'] }];
    for (const change of changes) {
      const refusal = await r.f.credential(await sign(change), { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } }).then(() => null, (e: unknown) => e);
      expect({ change, refusal }).toEqual({ change, refusal: told(401, 'invalid_token', 'The access token is not valid for this issuer') });
    }
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
    // Re-signed unchanged, the token is accepted: the refusals above are the claims', not the signature's.
    await expect(r.f.credential(await sign({}), { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } })).resolves.toBeDefined();
  });

  test('one request per token: a new request with the same token is invalid_token (401)', async () => {
    const r = await redeemed();
    await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } });
    const fresh = (await r.f.protocol.nonce(scope)).c_nonce;
    const again = r.wallet.makeProof({ aud: ISSUER, nonce: fresh, key: r.wallet.newHolderKey() });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [again] } })).rejects.toEqual(refused('invalid_token', 401));
  });

  test('what the wallet is told: a token already used, a proof payload that is not JSON, each private member of a proof key', async () => {
    const r = await redeemed();
    // A compact JWS whose payload is not JSON: shaped like a JWT, but not one.
    const [h, , sig] = r.proof().split('.') as [string, string, string];
    const notJson = `${h}.${Buffer.from('not json').toString('base64url')}.${sig}`;
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [notJson] } })).rejects.toEqual(
      expect.objectContaining({ status: 400, code: 'invalid_proof', message: 'The proof is not a JWT' }),
    );
    const key = r.wallet.newHolderKey();
    const { d } = key.privateKey.export({ format: 'jwk' }) as { d: string };
    const leaky = r.wallet.makeProof({ aud: ISSUER, nonce: r.nonce, key, header: { jwk: { ...key.publicJwk, d, p: 'x', q: 'y' } } });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [leaky] } })).rejects.toMatchObject({
      code: 'invalid_proof',
      message: "The proof's jwk header holds private key members (d, p, q); send the public key only",
    });
    await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } });
    const again = r.wallet.makeProof({ aud: ISSUER, nonce: (await r.f.protocol.nonce(scope)).c_nonce, key: r.wallet.newHolderKey() });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [again] } })).rejects.toEqual(
      expect.objectContaining({ status: 401, code: 'invalid_token', message: 'Credentials were already issued with this access token (exchange issued)', headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }),
    );
  });

  test('a DPoP proof used again at the credential endpoint: 401 with the DPoP challenge, invalid_dpop_proof (RFC 9449 §7.1, §11.1)', async () => {
    const f = await oid4vciFixture();
    const wallet = dpopWallet();
    const t = (await f.token((await f.offer()).code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token` }) } })) as { access_token: string; token_type: string; c_nonce: string };
    expect(t.token_type).toBe('DPoP');
    const dpop = wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/credential`, accessToken: t.access_token });
    const headers = { authorization: `DPoP ${t.access_token}`, dpop };
    const proof = (nonce: string) => wallet.makeProof({ aud: ISSUER, nonce, key: wallet.newHolderKey() });
    await f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [proof(t.c_nonce)] } }, headers);
    const fresh = (await f.protocol.nonce(scope)).c_nonce;
    await expect(f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [proof(fresh)] } }, headers)).rejects.toEqual(
      expect.objectContaining({ status: 401, code: 'invalid_dpop_proof', message: 'The DPoP proof was already used', headers: { 'www-authenticate': 'DPoP error="invalid_dpop_proof"' } }),
    );
  });

  test.each([
    ['its configuration was deleted', 'configuration_deleted', 'The credential configuration of this offer no longer exists', async (r: Awaited<ReturnType<typeof redeemed>>) => r.f.supported.delete(scope, r.f.config.supported_cred_id)],
    ['its issuer DID was deactivated', 'issuer_did_unavailable', 'The issuer DID of this offer no longer exists or was deactivated', async (r: Awaited<ReturnType<typeof redeemed>>) => void (await r.f.dids.deactivate(scope, r.f.did.did))],
    [
      'its configuration no longer passes the library',
      'configuration_invalid',
      'The credential configuration of this offer cannot be issued (wallets would reject its metadata)',
      async (r: Awaited<ReturnType<typeof redeemed>>) => {
        const key = oid4vciKeys.supported(scope, r.f.config.supported_cred_id);
        const item = (await r.f.store.get(key))!;
        // An SD-JWT VC configuration without its vct: the library does not know it as one.
        const { vct: _vct, ...formatData } = item.format_data as Record<string, unknown>;
        await r.f.store.write([{ type: 'put', item: { ...item, format_data: formatData } }]);
      },
    ],
  ])('an offer is denied when %s, and the exchange fails with the reason', async (_name, reason, description, spoil) => {
    const r = await redeemed();
    await spoil(r);
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } })).rejects.toEqual(told(400, 'credential_request_denied', description));
    expect(await r.f.exchange(r.exchangeId)).toMatchObject({ state: 'failed', failure_reason: reason });
    expect(r.f.events('oid4vci.exchange.failed').map((e) => e.data.failure_reason)).toEqual([reason]);
  });
});

describe('the notification endpoint', () => {
  test.each([
    ['credential_deleted', 'deleted', undefined],
    ['credential_failure', 'failed', 'wallet: storage full'],
  ] as const)('%s moves the exchange to %s (with the wallet\'s reason), once; later notifications are refused', async (event, state, reason) => {
    const r = await redeemed();
    const issued = await issueOne(r);
    const notify = (ev: string, description?: string) => notifier(r)({ notification_id: issued.notification_id, event: ev, ...(description ? { event_description: description } : {}) });
    await notify(event, 'storage full');
    expect(await r.f.exchange(r.exchangeId)).toMatchObject({ state, ...(reason ? { failure_reason: reason } : {}) });
    await notify(event); // the same again: nothing changes
    expect(r.f.events(`oid4vci.exchange.${state}`)).toHaveLength(1);
    await expect(notify('credential_accepted')).rejects.toEqual(told(400, 'invalid_notification_request', `The exchange is already ${state}`));
  });

  test('an accepted credential records no failure; a failure without a description is recorded as credential_failure; another notification_id is unknown', async () => {
    const accepted = await redeemed();
    const first = await issueOne(accepted);
    await expect(notifier(accepted)({ notification_id: `${first.notification_id}x`, event: 'credential_accepted' })).rejects.toEqual(told(400, 'invalid_notification_id', 'Unknown notification_id'));
    await notifier(accepted)({ notification_id: first.notification_id, event: 'credential_accepted', event_description: 'stored' });
    const record = await accepted.f.exchange(accepted.exchangeId);
    expect({ state: record.state, failure_reason: record.failure_reason }).toEqual({ state: 'accepted', failure_reason: undefined });
    const failed = await redeemed();
    await notifier(failed)({ notification_id: (await issueOne(failed)).notification_id, event: 'credential_failure' });
    expect(await failed.f.exchange(failed.exchangeId)).toMatchObject({ state: 'failed', failure_reason: 'wallet: credential_failure' });
  });
});

test('every read of the flow sees the latest write: with a lagging replica, an offer just made is redeemed, issued and notified', async () => {
  const r0 = await oid4vciFixture();
  const { code, exchangeId } = await r0.offer({ pin: '4711' });
  const latest = laggingReads(r0.store);
  const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
  const t = (await r0.token(code, { txCode: '4711' })) as { access_token: string; c_nonce: string };
  const issued = (await r0.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey() })] } })) as { notification_id: string };
  await notifier({ f: r0, accessToken: t.access_token })({ notification_id: issued.notification_id, event: 'credential_accepted' });
  expect(await latest(oid4vciKeys.exchange(scope, exchangeId))).toMatchObject({ state: 'accepted' });
});

test('keys of one-time values are hashes, never the values', async () => {
  const r = await redeemed();
  await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } });
  const sks = [...r.f.store.items.values()].filter((i) => i.PK === keys.walletPartition(scope)).map((i) => String(i.SK));
  expect(sks.some((sk) => sk.includes(r.nonce))).toBe(false);
  expect(sks.filter((sk) => sk.startsWith('VCUSED#nonce#'))).toHaveLength(1);
});

/**
 * Each bound at both of its sides, with the issuer's clock fixed to a whole second: one second inside
 * is served, one second outside is refused with the protocol's code and description.
 */
describe('the bounds of freshness and size, at both sides', () => {
  test('a DPoP proof at the token endpoint is fresh from five minutes before its iat to five minutes after (RFC 9449 §11.1)', async () => {
    const f = await oid4vciFixture({ now: at });
    const wallet = dpopWallet();
    const redeem = async (iat: number) => f.token((await f.offer()).code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token`, iat }) } });
    for (const iat of [T - 300, T + 300]) await expect(redeem(iat)).resolves.toMatchObject({ token_type: 'DPoP' });
    for (const iat of [T - 301, T + 301]) await expect(redeem(iat)).rejects.toEqual(told(400, 'invalid_dpop_proof', 'The DPoP proof is not fresh (iat)'));
  });

  test('a DPoP jti is 8 to 256 characters: 7 and 257 are refused, and the offer stays redeemable', async () => {
    const f = await oid4vciFixture({ now: at });
    const wallet = dpopWallet();
    const redeem = async (jti: string, code?: string) => f.token(code ?? (await f.offer()).code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token`, jti }) } });
    for (const n of [8, 256]) await expect(redeem('j'.repeat(n))).resolves.toMatchObject({ token_type: 'DPoP' });
    const { code, exchangeId } = await f.offer();
    for (const n of [7, 257]) {
      await expect(redeem('k'.repeat(n), code)).rejects.toEqual(told(400, 'invalid_dpop_proof', 'The DPoP proof needs a jti of 8 to 256 characters'));
    }
    expect((await f.exchange(exchangeId)).state).toBe('offer');
  });

  test('a spent DPoP jti outlives every moment its proof could be fresh: DynamoDB may delete it only after', async () => {
    const f = await oid4vciFixture({ now: at });
    const wallet = dpopWallet();
    // The latest iat still fresh now; that proof stays fresh until T + 600.
    const jti = 'jti-at-the-edge';
    await f.token((await f.offer()).code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token`, jti, iat: T + 300 }) } });
    const spent = await f.store.get(oid4vciKeys.used(scope, 'dpop', jti));
    // DynamoDB's TTL deletes an item once its ttl is in the past.
    expect(Number(spent!.ttl)).toBeGreaterThan(T + 600);
    expect(Number(spent!.ttl)).toBeLessThan(T + 3600);
  });

  test('a stale DPoP proof at the credential endpoint is a 401 with the DPoP challenge (RFC 9449 §7.1), and issues nothing', async () => {
    const f = await oid4vciFixture({ now: at });
    const wallet = dpopWallet();
    const { code, exchangeId } = await f.offer();
    const t = (await f.token(code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token`, iat: T }) } })) as { access_token: string; c_nonce: string };
    const stale = wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/credential`, accessToken: t.access_token, iat: T - 301 });
    const proof = wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey(), iat: T });
    await expect(f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [proof] } }, { authorization: `DPoP ${t.access_token}`, dpop: stale })).rejects.toEqual(
      expect.objectContaining({ status: 401, code: 'invalid_dpop_proof', message: 'The DPoP proof is not fresh (iat)', headers: { 'www-authenticate': 'DPoP error="invalid_dpop_proof"' } }),
    );
    expect((await f.exchange(exchangeId)).state).toBe('redeemed');
  });

  test("a key proof's iat: up to five minutes ahead, and no older than its c_nonce's lifetime plus five minutes (Appendix F.1)", async () => {
    const issue = async (iat: number) => {
      const r = await redeemed({ now: at });
      return r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ iat })] } });
    };
    // The c_nonce lives 300 s; the skew allowed either way is 300 s.
    for (const iat of [T + 300, T - 600]) await expect(issue(iat)).resolves.toHaveProperty('credentials');
    for (const iat of [T + 301, T - 601]) await expect(issue(iat)).rejects.toEqual(told(400, 'invalid_proof', 'The proof was not made now (iat)'));
    const r = await redeemed({ now: at });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ payload: { iat: undefined } })] } })).rejects.toEqual(
      told(400, 'invalid_proof', 'The proof needs an iat'),
    );
  });

  test('what the wallet is told for a credential identifier, an encrypted response, a binding the configuration lacks', async () => {
    const r = await redeemed({ now: at });
    await expect(r.f.credential(r.accessToken, { credential_identifier: 'x', proofs: { jwt: [r.proof()] } })).rejects.toEqual(
      told(400, 'unknown_credential_identifier', 'This issuer hands out no credential identifiers; name the credential_configuration_id'),
    );
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] }, credential_response_encryption: { jwk: {}, enc: 'A128GCM' } })).rejects.toEqual(
      told(400, 'invalid_encryption_parameters', 'This issuer does not encrypt credential responses'),
    );
    const twoMethods = await r.f.supported.create(scope, draftFromSdJwt({ id: 'JwkOrDidJwk', vct: 'urn:j', claims: { given_name: { value_type: 'string' } }, cryptographic_binding_methods_supported: ['jwk', 'did:jwk'] }));
    const offer = await r.f.offer({ supported_cred_id: twoMethods.supported_cred_id });
    const t = (await r.f.token(offer.code)) as { access_token: string; c_nonce: string };
    const didProof = r.wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: r.wallet.newHolderKey(), binding: 'did:key' });
    await expect(r.f.credential(t.access_token, { credential_configuration_id: 'JwkOrDidJwk', proofs: { jwt: [didProof] } })).rejects.toEqual(
      told(400, 'invalid_proof', 'This credential binds to jwk, did:jwk, not did:key'),
    );
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
    expect((await r.f.exchange(offer.exchangeId)).state).toBe('redeemed');
  });

  test('a proof that is not a whole signed compact JWT, in 1.0 proofs or a draft proof, is invalid_proof before anything else reads it', async () => {
    const r = await redeemed({ now: at });
    const good = r.proof();
    const [h, p] = good.split('.') as [string, string];
    const notCompact = [`${h}.${p}.`, `${h}.${p}`, ` ${good}`, `${good} `, `x.${good}`, 42, null, [good]];
    for (const jwt of notCompact) {
      await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [jwt] } })).rejects.toEqual(told(400, 'invalid_proof', 'Each proof must be a signed compact JWT'));
      await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proof: { proof_type: 'jwt', jwt } })).rejects.toEqual(told(400, 'invalid_proof', 'Each proof must be a signed compact JWT'));
    }
    // null where an object belongs, and a draft proof without its jwt: refused as requests, never a crash.
    const answers = [];
    for (const body of [{ proofs: null }, { proof: null }, { proof: { proof_type: 'jwt' } }]) {
      answers.push(await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', ...body }).catch((e: ProtocolError) => [e.status, e.code, e.message]));
    }
    expect(answers).toEqual([
      [400, 'invalid_credential_request', "Error validating credential request: Expected record, received null at 'proofs'"],
      [400, 'invalid_credential_request', "Error validating credential request: Expected object, received null at 'proof'"],
      [400, 'invalid_proof', 'A jwt proof of possession of the holder key is required'],
    ]);
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
    // The draft shape with a good proof is served.
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proof: { proof_type: 'jwt', jwt: good } })).resolves.toHaveProperty('credential');
  });
});

const spends = (kind: 'nonce' | 'dpop') => (ops: readonly WriteOp[]) => ops.some((op) => op.type === 'put' && String(op.item.SK).startsWith(`VCUSED#${kind}#`));
const failing = (ops: readonly WriteOp[]) => ops.some((op) => op.type === 'update' && op.set.state === 'failed');

describe('a write that loses a race, or fails', () => {
  test('a redemption cancelled against a concurrent one, on every try: the code is already used (invalid_grant), not a 5xx', async () => {
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer();
    const codeKey = oid4vciKeys.code(scope, code);
    const raced = raceBefore(
      f.store,
      (ops) => ops.some((op) => op.type === 'delete' && op.key.SK === codeKey.SK),
      // The winner: the same offer redeemed by a concurrent request.
      async (write) => {
        const ex = (await f.store.get(oid4vciKeys.exchange(scope, exchangeId)))!;
        await write([{ type: 'delete', key: codeKey }, { type: 'put', item: { ...ex, state: 'redeemed' } }]);
      },
      { conflict: true },
    );
    await expect(f.token(code)).rejects.toEqual(told(400, 'invalid_grant', 'Unknown or already used pre-authorized code'));
    expect(raced()).toBe(true);
    expect((await f.exchange(exchangeId)).state).toBe('redeemed');
  });

  test('a c_nonce spent by a concurrent request of another exchange: invalid_nonce, and this exchange issues nothing', async () => {
    const a = await redeemed();
    const nonce = (await a.f.protocol.nonce(scope)).c_nonce;
    const other = await a.f.offer();
    const t = (await a.f.token(other.code)) as { access_token: string };
    const raced = raceBefore(a.f.store, spends('nonce'), async () => {
      await a.f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [a.proof({ nonce })] } });
    });
    const pending = a.f.credential(a.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [a.proof({ nonce })] } });
    await expect(pending).rejects.toEqual(told(400, 'invalid_nonce', 'The c_nonce was already used; get a fresh one from the nonce endpoint'));
    expect(raced()).toBe(true);
    expect((await a.f.exchange(a.exchangeId)).state).toBe('redeemed');
    expect((await a.f.exchange(other.exchangeId)).state).toBe('issued');
  });

  test('a DPoP proof spent by a concurrent request with the same token: 401 with the DPoP challenge, and nothing issued', async () => {
    const f = await oid4vciFixture();
    const wallet = dpopWallet();
    const { code, exchangeId } = await f.offer();
    const t = (await f.token(code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token` }) } })) as { access_token: string; c_nonce: string };
    const headers = { authorization: `DPoP ${t.access_token}`, dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/credential`, accessToken: t.access_token }) };
    const jti = decodeJwt(headers.dpop).jti!;
    const raced = raceBefore(f.store, spends('dpop'), (write) => write([{ type: 'put', item: { ...oid4vciKeys.used(scope, 'dpop', jti), ttl: 1 } }]));
    const proof = wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey() });
    await expect(f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [proof] } }, headers)).rejects.toEqual(
      expect.objectContaining({ status: 401, code: 'invalid_dpop_proof', message: 'The DPoP proof was already used', headers: { 'www-authenticate': 'DPoP error="invalid_dpop_proof"' } }),
    );
    expect(raced()).toBe(true);
    expect((await f.exchange(exchangeId)).state).toBe('redeemed');
  });

  test('the same request sent twice at once: the copy that loses is told its c_nonce was used (invalid_nonce), the credential issued once', async () => {
    const r = await redeemed();
    const body = { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } };
    const raced = raceBefore(r.f.store, spends('nonce'), async () => {
      await r.f.credential(r.accessToken, body);
    });
    await expect(r.f.credential(r.accessToken, body)).rejects.toEqual(told(400, 'invalid_nonce', 'The c_nonce was already used; get a fresh one from the nonce endpoint'));
    expect(raced()).toBe(true);
    expect(r.f.events('oid4vci.exchange.issued')).toHaveLength(1);
  });

  test('the same token used by a concurrent request with another nonce: the loser is told the credentials were issued (invalid_token), not a nonce error', async () => {
    const r = await redeemed();
    const fresh = (await r.f.protocol.nonce(scope)).c_nonce;
    const raced = raceBefore(r.f.store, spends('nonce'), async () => {
      await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ nonce: fresh })] } });
    });
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } })).rejects.toEqual(
      expect.objectContaining({ status: 401, code: 'invalid_token', message: 'Credentials were already issued with this access token' }),
    );
    expect(raced()).toBe(true);
    expect(r.f.events('oid4vci.exchange.issued')).toHaveLength(1);
  });

  test("a store failure while burning a code (the last wrong PIN) is the store's error, not a claim that the code is gone", async () => {
    const f = await oid4vciFixture();
    const { code, exchangeId } = await f.offer({ pin: '4711' });
    for (let i = 0; i < 4; i++) await expect(f.token(code, { txCode: '0000' })).rejects.toMatchObject({ code: 'invalid_grant' });
    failWrites(f.store, failing, new Error('ProvisionedThroughputExceededException'));
    await expect(f.token(code, { txCode: '0000' })).rejects.toThrow('ProvisionedThroughputExceededException');
    expect((await f.exchange(exchangeId)).state).toBe('offer');
  });

  test("a store failure while denying an offer (its configuration deleted) is the store's error", async () => {
    const r = await redeemed();
    await r.f.supported.delete(scope, r.f.config.supported_cred_id);
    failWrites(r.f.store, failing, new Error('InternalServerError'));
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } })).rejects.toThrow('InternalServerError');
  });

  test('a credential_configuration_id other than the token\'s is unknown_credential_configuration, naming the one it is for', async () => {
    const r = await redeemed();
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Other', proofs: { jwt: [r.proof()] } })).rejects.toEqual(
      expect.objectContaining({ status: 400, code: 'unknown_credential_configuration', message: 'This access token is for credential configuration Pid' }),
    );
  });
});

describe('access to the credential and notification endpoints', () => {
  const decodeSegment = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString()) as Record<string, unknown>;
  /** The same DPoP proof with private members added to its header jwk (refused before its signature is read). */
  const withPrivateJwk = (proof: string) => {
    const [h, p, s] = proof.split('.') as [string, string, string];
    const header = decodeSegment(h);
    return `${Buffer.from(JSON.stringify({ ...header, jwk: { ...(header.jwk as object), d: 'c2VjcmV0', p: 'eA' } })).toString('base64url')}.${p}.${s}`;
  };

  test("a DPoP proof whose jwk holds private members: 400 at the token endpoint, 401 with the DPoP challenge at the credential endpoint, naming them; nothing moves", async () => {
    const f = await oid4vciFixture();
    const wallet = dpopWallet();
    const { code, exchangeId } = await f.offer();
    const description = "The DPoP proof's jwk header holds private key members (d, p); send the public key only";
    await expect(f.token(code, { headers: { dpop: withPrivateJwk(wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token` })) } })).rejects.toEqual(told(400, 'invalid_dpop_proof', description));
    expect((await f.exchange(exchangeId)).state).toBe('offer');
    const t = (await f.token(code, { headers: { dpop: wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/token` }) } })) as { access_token: string; c_nonce: string };
    const leaky = withPrivateJwk(wallet.makeDpopProof({ htm: 'POST', htu: `${ISSUER}/credential`, accessToken: t.access_token }));
    const proof = wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: wallet.newHolderKey() });
    await expect(f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [proof] } }, { authorization: `DPoP ${t.access_token}`, dpop: leaky })).rejects.toEqual(
      expect.objectContaining({ status: 401, code: 'invalid_dpop_proof', message: description, headers: { 'www-authenticate': 'DPoP error="invalid_dpop_proof"' } }),
    );
    expect((await f.exchange(exchangeId)).state).toBe('redeemed');
  });

  test('a draft request (format, vct, credential_definition) must name the configuration of its token: format and types both', async () => {
    const r = await redeemed();
    const draft = (body: Record<string, unknown>) => r.f.credential(r.accessToken, { ...body, proof: { proof_type: 'jwt', jwt: r.proof() } });
    const other = told(400, 'unknown_credential_configuration', 'This access token is for credential configuration Pid');
    // the SD-JWT configuration's vct under another format
    await expect(draft({ format: 'jwt_vc_json', vct: 'urn:pid', credential_definition: { type: ['VerifiableCredential'] } })).rejects.toEqual(other);
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
    // either SD-JWT format name serves an SD-JWT configuration
    await expect(draft({ format: 'dc+sd-jwt', vct: 'urn:pid' })).resolves.toHaveProperty('credential');

    const degree = await r.f.supported.create(scope, draftFromJwt({ id: 'Degree', type: ['VerifiableCredential', 'Degree'], '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { given_name: { value_type: 'string' } } }));
    const degreeToken = async () => {
      const t = (await r.f.token((await r.f.offer({ supported_cred_id: degree.supported_cred_id })).code)) as { access_token: string; c_nonce: string };
      return (type?: string[]) =>
        r.f.credential(t.access_token, { format: 'jwt_vc_json', ...(type ? { credential_definition: { type } } : {}), proof: { proof_type: 'jwt', jwt: r.wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce, key: r.wallet.newHolderKey() }) } });
    };
    // every type of the configuration must be asked for; a subset names another credential
    await expect((await degreeToken())(['VerifiableCredential'])).rejects.toEqual(told(400, 'unknown_credential_configuration', 'This access token is for credential configuration Degree'));
    await expect((await degreeToken())(['VerifiableCredential', 'Degree'])).resolves.toHaveProperty('credential');
  });

  test('the same credential request sent again after it was served: invalid_nonce (its proof spent), before the token is found used', async () => {
    const r = await redeemed();
    const body = { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } };
    await r.f.credential(r.accessToken, body);
    await expect(r.f.credential(r.accessToken, body)).rejects.toEqual(told(400, 'invalid_nonce', 'The c_nonce was already used; get a fresh one from the nonce endpoint'));
  });

  test('a draft request whose format is empty names no credential', async () => {
    const r = await redeemed();
    await expect(r.f.credential(r.accessToken, { format: '', proof: { proof_type: 'jwt', jwt: r.proof() } })).rejects.toEqual(
      told(400, 'invalid_credential_request', 'Name the credential: credential_configuration_id (1.0), or format with vct / credential_definition (drafts)'),
    );
  });

  test('the notification endpoint: a notification_id only an issued exchange has, the wallet\'s reason cut at 500 characters', async () => {
    const r = await redeemed();
    const notify = notifier(r);
    // before any credential: the exchange has no notification_id, and none sent matches it
    await expect(notify({ event: 'credential_accepted' })).rejects.toEqual(told(400, 'invalid_notification_id', 'Unknown notification_id'));
    await expect(notify({ notification_id: '', event: 'credential_accepted' })).rejects.toEqual(told(400, 'invalid_notification_id', 'Unknown notification_id'));
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
    const issued = await issueOne(r);
    await notify({ notification_id: issued.notification_id, event: 'credential_failure', event_description: 'x'.repeat(600) });
    expect((await r.f.exchange(r.exchangeId)).failure_reason).toBe(`wallet: ${'x'.repeat(500)}`);
  });

  test('a notification whose exchange was deleted meanwhile: refused, saying the exchange is gone', async () => {
    const r = await redeemed();
    const issued = await issueOne(r);
    raceBefore(r.f.store, () => true, (write) => write([{ type: 'delete', key: oid4vciKeys.exchange(scope, r.exchangeId) }]));
    await expect(notifier(r)({ notification_id: issued.notification_id, event: 'credential_accepted' })).rejects.toEqual(told(400, 'invalid_notification_request', 'The exchange is already gone'));
  });

  test.each([
    ['the same notification', 'credential_deleted', null],
    ['another notification', 'credential_accepted', 'The exchange is already accepted'],
  ] as const)('%s sent at the same time as credential_deleted: the copy is served once, another is refused with the state it found', async (_name, winner, refusal) => {
    const r = await redeemed();
    const issued = await issueOne(r);
    const notify = (event: string) => notifier(r)({ notification_id: issued.notification_id, event });
    const raced = raceBefore(r.f.store, () => true, async () => notify(winner));
    const loser = notify('credential_deleted');
    if (refusal) await expect(loser).rejects.toEqual(told(400, 'invalid_notification_request', refusal));
    else await expect(loser).resolves.toBeUndefined();
    expect(raced()).toBe(true);
    const state = winner === 'credential_deleted' ? 'deleted' : 'accepted';
    expect({ state: (await r.f.exchange(r.exchangeId)).state, events: r.f.events(`oid4vci.exchange.${state}`).length }).toEqual({ state, events: 1 });
  });
});

describe("the libraries' refusals as a wallet reads them", () => {
  test('no access token: 401 with each scheme as a bare challenge (RFC 6750 §3: no error code), not the names of absent parameters', async () => {
    const r = await redeemed();
    const refusal = r.f.protocol.credential(scope, ISSUER, r.f.request('credential'), { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } });
    await expect(refusal).rejects.toEqual(told(401, 'invalid_token', 'The access token is missing or invalid'));
    await expect(refusal).rejects.toHaveProperty('headers', { 'www-authenticate': 'Bearer, DPoP' });
  });

  test("a made-up access token: the library's challenge with its error and description, quoted", async () => {
    const r = await redeemed();
    const refusal = r.f.credential('a.b.c', { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } });
    await expect(refusal).rejects.toEqual(told(401, 'invalid_token', 'Token is not valid'));
    await expect(refusal).rejects.toHaveProperty('headers', { 'www-authenticate': 'Bearer error="invalid_token", error_description="Token is not valid"' });
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
  });

  test("a challenge's values on one line of RFC 6749's characters, every parameter the library gave kept", () => {
    const e = new Oauth2ResourceUnauthorizedError('internal', [
      { scheme: 'DPoP', error: 'invalid_dpop_proof', error_description: 'line one\nline "two"\twith é and \\', additionalPayload: { algs: 'ES256 EdDSA' } },
      { scheme: 'Bearer', scope: 'openid' },
    ]);
    const mapped = toProtocolError(e) as ProtocolError;
    expect(mapped).toEqual(told(401, 'invalid_dpop_proof', "line one: line 'two' with and"));
    expect(mapped.headers).toEqual({ 'www-authenticate': `DPoP error="invalid_dpop_proof", error_description="line one: line 'two' with and", algs="ES256 EdDSA", Bearer scope="openid"` });
  });

  test("a request the library's schema refuses: the summary and its first issue, on one line", async () => {
    const r = await redeemed();
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: 'x' } })).rejects.toEqual(
      told(400, 'invalid_credential_request', "Error validating credential request: Expected array, received string at 'proofs.jwt'"),
    );
    // A bare validation error (the openid4vci methods wrap theirs with the endpoint's code): invalid_request.
    expect(toProtocolError(new LibraryValidationError('Error validating the request\n✖ at "x"'))).toEqual(told(400, 'invalid_request', "Error validating the request: at 'x'"));
    const other = new Error('not a library error');
    expect(toProtocolError(other)).toBe(other);
  });

  test('a header that is not visible ASCII: invalid_request naming the header', async () => {
    const f = await oid4vciFixture();
    await expect(f.token((await f.offer()).code, { headers: { dpop: 'é.x.y' } })).rejects.toEqual(told(400, 'invalid_request', 'The dpop header must be visible ASCII'));
  });

  test("every protocol refusal's description is sent so, whatever text it was made from", () => {
    const e = new ProtocolError(400, 'invalid_notification_request', 'event: expected one of "credential_accepted"|"credential_deleted"\nmore');
    expect([e.message, e.body]).toEqual(["event: expected one of 'credential_accepted'|'credential_deleted': more", { error: 'invalid_notification_request', error_description: "event: expected one of 'credential_accepted'|'credential_deleted': more" }]);
  });

  test('errorDescription: one line, no quote or backslash, no control or non-ASCII character', () => {
    expect(errorDescription('Summary\n✖ first issue "x"\n✖ second issue')).toBe("Summary: first issue 'x'");
    expect(errorDescription('  plain  text \r\n')).toBe('plain text');
    expect(errorDescription('a\\b\u0000c\u007fdé')).toBe('a b c d');
  });
});

describe('what the credential endpoint answers and records', () => {
  test('ten proofs are a batch (batch_credential_issuance); eleven are refused, saying the most', async () => {
    const r = await redeemed();
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: Array.from({ length: 11 }, () => r.proof()) } })).rejects.toEqual(
      told(400, 'invalid_credential_request', 'At most 10 proofs per request (batch_credential_issuance)'),
    );
    const issued = (await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: Array.from({ length: 10 }, () => r.proof()) } })) as { credentials: unknown[] };
    expect(issued.credentials).toHaveLength(10);
  });

  test('a request with many proofs, each naming its own nonce, reads at most ten spent-nonce records before it is refused', async () => {
    const r = await redeemed();
    const nonces = await Promise.all(Array.from({ length: 40 }, () => r.f.protocol.nonce(scope)));
    const getMany = jest.spyOn(r.f.store, 'getMany');
    const proofs = nonces.map((n, i) => r.proof({ nonce: `${n.c_nonce}${'x'.repeat(i % 2)}` }));
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: proofs } })).rejects.toEqual(refused('invalid_credential_request'));
    // The exchange, its configuration and issuer DID, and ten nonces.
    expect(getMany.mock.calls.map(([keys]) => keys.length)).toEqual([13]);
  });

  test('two proofs for the same key: invalid_proof, and nothing is issued (§8.3: each key binds one credential)', async () => {
    const r = await redeemed();
    const key = r.wallet.newHolderKey();
    const twice = [r.wallet.makeProof({ aud: ISSUER, nonce: r.nonce, key }), r.wallet.makeProof({ aud: ISSUER, nonce: r.nonce, key })];
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: twice } })).rejects.toEqual(told(400, 'invalid_proof', 'Each proof must be for a different key'));
    expect((await r.f.exchange(r.exchangeId)).state).toBe('redeemed');
  });

  test('a proof without a signature is invalid_proof even when its nonce was spent: the spent-nonce check reads only signed proofs', async () => {
    const r = await redeemed();
    await issueOne(r);
    const t = (await r.f.token((await r.f.offer()).code)) as { access_token: string };
    const [h, p] = r.proof({ nonce: r.nonce }).split('.') as [string, string];
    await expect(r.f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [`${h}.${p}.`] } })).rejects.toEqual(told(400, 'invalid_proof', 'Each proof must be a signed compact JWT'));
    // Signed, it is told its nonce was used.
    await expect(r.f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ nonce: r.nonce })] } })).rejects.toEqual(refused('invalid_nonce'));
  });

  test('a nonce this issuer never minted: invalid_nonce, saying so', async () => {
    const r = await redeemed();
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ nonce: 'minted-elsewhere' })] } })).rejects.toEqual(
      told(400, 'invalid_nonce', 'The proof carries no c_nonce of this issuer; get one from the nonce endpoint'),
    );
  });

  test('a c_nonce is good through the instant it expires, and expired (invalid_nonce, not invalid_proof) a millisecond after', async () => {
    let now = T * 1000;
    const r = await redeemed({ now: () => new Date(now) });
    // The token's c_nonce (and the token), and this one, expire at T + 300.
    const { c_nonce } = await r.f.protocol.nonce(scope);
    now = (T + 300) * 1000;
    await expect(r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof()] } })).resolves.toHaveProperty('credentials');
    const next = await redeemed({ now: () => new Date(now) });
    now = (T + 300) * 1000 + 1;
    await expect(next.f.credential(next.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [next.proof({ nonce: c_nonce })] } })).rejects.toEqual(
      told(400, 'invalid_nonce', 'The c_nonce has expired; get a fresh one from the nonce endpoint'),
    );
  });

  test("a draft request for one credential is answered with a fresh c_nonce (draft 13 §7.3), valid for the full lifetime and accepted", async () => {
    const r = await redeemed({ now: at });
    const answer = (await r.f.credential(r.accessToken, { format: 'vc+sd-jwt', vct: 'urn:pid', proof: { proof_type: 'jwt', jwt: r.proof() } })) as { credential: string; c_nonce: string; c_nonce_expires_in: number };
    expect(answer.c_nonce_expires_in).toBe(300);
    expect(answer.c_nonce).not.toBe(r.nonce);
    expect(nonceExpiry((await r.f.secrets.of(scope.walletId)).nonceKey, answer.c_nonce)).toBe(T + 300);
    // Accepted with another token of the same issuer, up to its expiry.
    const next = await r.f.token((await r.f.offer()).code) as { access_token: string };
    await expect(r.f.credential(next.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ nonce: answer.c_nonce })] } })).resolves.toHaveProperty('credentials');
    // A 1.0 request's answer has none: 1.0 wallets ask the nonce endpoint.
    const v1 = await redeemed({ now: at });
    expect(((await issueOne(v1)) as { c_nonce?: string }).c_nonce).toBeUndefined();
  });

  test("a spent c_nonce's record outlives the nonce, and the exchange records the nonce its proof used", async () => {
    const r = await redeemed({ now: at });
    const { c_nonce } = await r.f.protocol.nonce(scope);
    await r.f.credential(r.accessToken, { credential_configuration_id: 'Pid', proofs: { jwt: [r.proof({ nonce: c_nonce })] } });
    const spent = await r.f.store.get(oid4vciKeys.used(scope, 'nonce', c_nonce));
    // DynamoDB's TTL deletes an item once its ttl is in the past; the nonce is good through T + 300.
    expect(Number(spent!.ttl)).toBeGreaterThan(T + 300);
    expect(Number(spent!.ttl)).toBeLessThan(T + 3600);
    expect(await r.f.exchanges.get(scope, r.exchangeId)).toMatchObject({ state: 'issued', nonce: c_nonce });
  });

  test('a redeemed exchange stays redeemed while its access token is valid (five seconds of grace), and is expired after', async () => {
    let now = T * 1000;
    const r = await redeemed({ now: () => new Date(now) });
    // The token's exp is checked in whole seconds: five seconds' grace after it.
    now = (T + 305) * 1000;
    expect((await r.f.exchanges.get(scope, r.exchangeId)).state).toBe('redeemed');
    now = (T + 305) * 1000 + 1;
    expect((await r.f.exchanges.get(scope, r.exchangeId)).state).toBe('expired');
  });
});
