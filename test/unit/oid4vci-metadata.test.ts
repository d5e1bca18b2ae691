/**
 * What the issuer publishes for wallets (OpenID4VCI 1.0 §12.2, RFC 8414), read as a wallet reads it:
 * display entries with 1.0's members only, a configuration's defaults, the authorization server's
 * grant, and the offer by reference.
 */
import {
  authorizationServerMetadata,
  BATCH_SIZE,
  CREDENTIAL_SIGNING_ALGS,
  configurationMetadata,
  credentialIssuerMetadata,
  DEFAULT_BINDING_METHODS,
  displayFor,
} from '../../lib/oid4vci/protocol/metadata';
import { VERIFIABLE_ALGS } from '../../lib/oid4vc/callbacks';
import type { DisplayEntry, IssuableConfiguration } from '../../lib/oid4vci/records';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { draftFromSdJwt } from '../../lib/oid4vci/supported';
import { keys } from '../../lib/store/keys';
import { ISSUER, oid4vciFixture, scope } from '../helpers/oid4vci-fixture';

const config = (over: Partial<IssuableConfiguration> = {}): IssuableConfiguration => ({
  id: 'Pid',
  supportedCredId: 's1',
  format: 'dc+sd-jwt',
  vct: 'urn:pid',
  claims: { given_name: { value_type: 'string', mandatory: true, display: [{ name: 'Given name', locale: 'en' }] }, age: { value_type: 'number' } },
  sdList: [],
  order: null,
  display: null,
  bindingMethods: null,
  signingAlgs: null,
  ...over,
});

describe('display entries (1.0 §12.2.4, Appendix B.2)', () => {
  test('only the members 1.0 defines, each only as a non-empty string', () => {
    const entry = { name: 'Card', locale: 'en', description: 'A card', background_color: '#000', text_color: '#fff', extra: 'x', nested: { a: 1 } };
    expect(displayFor([entry])).toEqual([{ name: 'Card', locale: 'en', description: 'A card', background_color: '#000', text_color: '#fff' }]);
    expect(displayFor([{ name: 'Card', locale: '', description: 5, background_color: null, text_color: ['#fff'] } as never])).toEqual([{ name: 'Card' }]);
  });

  test('an entry without a usable name is left out, and no entries at all is no display', () => {
    expect(displayFor([{ name: '' }, { name: 7 } as never, { locale: 'en' }, null as never, 'x' as never, { name: 'Kept' }])).toEqual([{ name: 'Kept' }]);
    expect(displayFor([{ name: '' }])).toBeUndefined();
    expect(displayFor([])).toBeUndefined();
    expect(displayFor(null)).toBeUndefined();
    expect(displayFor(undefined)).toBeUndefined();
  });

  test("logo and background_image: an https or data uri (the contract's logo.url read as uri), alt_text when it is a string", () => {
    const entries = [
      { name: 'A', logo: { url: 'https://example.com/a.png', alt_text: 'A logo' }, background_image: { uri: 'data:image/png;base64,AAAA' } },
      { name: 'B', logo: { uri: 'HTTPS://example.com/b.png', url: 'https://example.com/ignored.png', alt_text: 5 } },
      { name: 'C', logo: { url: 'http://example.com/c.png' }, background_image: { uri: 'javascript:alert(1)' } },
      { name: 'D', logo: 'https://example.com/d.png', background_image: { uri: 42 } },
      { name: 'N', logo: null, background_image: null },
      { name: 'E', logo: { uri: 'ftp://x/https://y' }, background_image: { uri: ' https://example.com/e.png' } },
    ] as DisplayEntry[];
    expect(displayFor(entries)).toEqual([
      { name: 'A', logo: { uri: 'https://example.com/a.png', alt_text: 'A logo' }, background_image: { uri: 'data:image/png;base64,AAAA' } },
      { name: 'B', logo: { uri: 'HTTPS://example.com/b.png' } },
      { name: 'C' },
      { name: 'D' },
      { name: 'N' },
      { name: 'E' },
    ]);
  });
});

describe('a configuration as published (1.0 Appendix A)', () => {
  test('an SD-JWT VC: its vct, the defaults for binding methods, signing and proof algorithms, and no display when it has none', () => {
    expect(configurationMetadata(config())).toEqual({
      format: 'dc+sd-jwt',
      scope: 'Pid',
      vct: 'urn:pid',
      cryptographic_binding_methods_supported: [...DEFAULT_BINDING_METHODS],
      credential_signing_alg_values_supported: [...CREDENTIAL_SIGNING_ALGS],
      proof_types_supported: { jwt: { proof_signing_alg_values_supported: [...VERIFIABLE_ALGS] } },
      credential_metadata: { claims: [{ path: ['given_name'], mandatory: true, display: [{ name: 'Given name', locale: 'en' }] }, { path: ['age'] }] },
    });
    expect(DEFAULT_BINDING_METHODS).toEqual(['jwk', 'did:key', 'did:jwk']);
    expect(CREDENTIAL_SIGNING_ALGS).toEqual(['EdDSA', 'ES256']);
  });

  test("what the configuration names instead of the defaults, and its display both where 1.0 and where drafts read it", () => {
    const display = [{ name: 'PID', locale: 'de' }];
    const published = configurationMetadata(config({ bindingMethods: ['did:key'], signingAlgs: ['ES256'], display }));
    expect(published).toMatchObject({
      cryptographic_binding_methods_supported: ['did:key'],
      credential_signing_alg_values_supported: ['ES256'],
      display,
      credential_metadata: { display },
    });
  });

  test('a jwt_vc_json configuration: its types as credential_definition.type, VerifiableCredential when it names none', () => {
    const jwt = config({ format: 'jwt_vc_json', vct: undefined, types: ['VerifiableCredential', 'UniversityDegree'] });
    expect(configurationMetadata(jwt)).toMatchObject({ format: 'jwt_vc_json', credential_definition: { type: ['VerifiableCredential', 'UniversityDegree'] } });
    expect(configurationMetadata(jwt)).not.toHaveProperty('vct');
    const { types: _types, ...untyped } = jwt;
    expect(configurationMetadata(untyped)).toMatchObject({ credential_definition: { type: ['VerifiableCredential'] } });
  });
});

describe('the documents', () => {
  test('the credential issuer: its endpoints under the issuer URL, the batch size, the label as display only when there is one', () => {
    const doc = credentialIssuerMetadata(ISSUER, 'Acme', [config()]);
    expect(doc).toMatchObject({
      credential_issuer: ISSUER,
      credential_endpoint: `${ISSUER}/credential`,
      nonce_endpoint: `${ISSUER}/nonce`,
      notification_endpoint: `${ISSUER}/notification`,
      batch_credential_issuance: { batch_size: 10 },
      display: [{ name: 'Acme' }],
    });
    expect(BATCH_SIZE).toBe(10);
    expect(Object.keys(doc.credential_configurations_supported as object)).toEqual(['Pid']);
    expect(credentialIssuerMetadata(ISSUER, null, [])).not.toHaveProperty('display');
  });

  test('the authorization server (RFC 8414): the pre-authorized code grant, anonymous access, no client authentication, DPoP algorithms', () => {
    expect(authorizationServerMetadata(ISSUER)).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/token`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:pre-authorized_code'],
      'pre-authorized_grant_anonymous_access_supported': true,
      token_endpoint_auth_methods_supported: ['none'],
      dpop_signing_alg_values_supported: [...VERIFIABLE_ALGS],
    });
  });
});

describe('metadata and offers as served', () => {
  test('a deleted wallet has no issuer: 404 issuer_not_found for both documents', async () => {
    const f = await oid4vciFixture();
    await f.store.write([{ type: 'delete', key: keys.wallet(scope) }]);
    for (const doc of [f.protocol.issuerMetadataDocument(scope, ISSUER), f.protocol.authorizationServerMetadataDocument(scope, ISSUER)]) {
      await expect(doc).rejects.toEqual(expect.objectContaining({ status: 404, code: 'issuer_not_found', message: 'No such credential issuer' }));
    }
  });

  test('a configuration the library rejects is left out; the others stay listed', async () => {
    const f = await oid4vciFixture();
    const other = await f.supported.create(scope, draftFromSdJwt({ id: 'Other', vct: 'urn:other', claims: {} }));
    const item = (await f.store.get(oid4vciKeys.supported(scope, other.supported_cred_id)))!;
    const { vct: _vct, ...formatData } = item.format_data as Record<string, unknown>;
    await f.store.write([{ type: 'put', item: { ...item, format_data: formatData } }]);
    const doc = await f.protocol.issuerMetadata(scope, ISSUER);
    expect(Object.keys(doc.credential_configurations_supported as object)).toEqual(['Pid']);
  });

  test('one document per issuer URL: the same wallet under another URL publishes that URL', async () => {
    const f = await oid4vciFixture();
    const other = `${ISSUER}-alias`;
    expect((await f.protocol.issuerMetadata(scope, ISSUER)).credential_issuer).toBe(ISSUER);
    expect((await f.protocol.issuerMetadata(scope, other)).credential_issuer).toBe(other);
    expect((await f.protocol.issuerMetadata(scope, ISSUER)).credential_issuer).toBe(ISSUER);
  });

  test('more issuer URLs than an instance keeps: the oldest is rebuilt when asked again, each still right', async () => {
    const f = await oid4vciFixture();
    for (let i = 0; i < 1001; i++) await f.protocol.issuerMetadataDocument(scope, `${ISSUER}/${i}`);
    const documents = (f.protocol as unknown as { documents: Map<string, unknown> }).documents;
    expect(documents.size).toBe(1000);
    expect([...documents.keys()][0]).toBe(`7|${ISSUER}/1`);
    expect((await f.protocol.issuerMetadata(scope, `${ISSUER}/0`)).credential_issuer).toBe(`${ISSUER}/0`);
  });

  test('an offer by reference is served while its code can be redeemed: through its last millisecond, not after, not once redeemed, not another', async () => {
    let now = Date.now();
    const f = await oid4vciFixture({ now: () => new Date(now) });
    const offer = async () => {
      const out = await f.exchanges.issue(scope, { supported_cred_id: f.config.supported_cred_id, credential_subject: { given_name: 'E' }, did: f.did.did }, 'https://issuer.example.com');
      const uri = decodeURIComponent(out.credential_offer_uri.split('credential_offer_uri=')[1]!);
      const expiresAt = (await f.exchange(out.exchange.exchange_id)).code_expires_at;
      return { ref: uri.split('/offers/')[1]!, offer: out.offer, expiresAt, code: out.offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'] };
    };
    const gone = expect.objectContaining({ status: 404, code: 'offer_not_found', message: 'No such credential offer, or it was already used' });
    const timed = await offer();
    expect(await f.protocol.offer(scope, timed.ref)).toEqual(timed.offer);
    now = timed.expiresAt;
    expect(await f.protocol.offer(scope, timed.ref)).toEqual(timed.offer);
    now = timed.expiresAt + 1;
    await expect(f.protocol.offer(scope, timed.ref)).rejects.toEqual(gone);
    const used = await offer();
    await f.token(used.code);
    await expect(f.protocol.offer(scope, used.ref)).rejects.toEqual(gone);
    await expect(f.protocol.offer(scope, 'no-such-reference')).rejects.toEqual(gone);
  });

  test('an offer whose exchange was deleted but whose reference was not: not served', async () => {
    const f = await oid4vciFixture();
    const out = await f.exchanges.issue(scope, { supported_cred_id: f.config.supported_cred_id, credential_subject: { given_name: 'E' }, did: f.did.did }, 'https://issuer.example.com');
    const ref = decodeURIComponent(out.credential_offer_uri.split('credential_offer_uri=')[1]!).split('/offers/')[1]!;
    await f.store.write([{ type: 'delete', key: oid4vciKeys.exchange(scope, out.exchange.exchange_id) }]);
    await expect(f.protocol.offer(scope, ref)).rejects.toEqual(expect.objectContaining({ status: 404, code: 'offer_not_found' }));
  });
});
