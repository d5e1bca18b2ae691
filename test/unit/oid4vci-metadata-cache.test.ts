/**
 * Issuer metadata kept per instance behind the wallet record's issuer_version, answered with an ETag
 * (304 on a match, without reading the supported credentials), and the status-list binding fact kept
 * on the configuration record (no binding query when none was ever bound).
 */
import { jest } from '@jest/globals';
import { JsonReply, RawRepresentation } from '../../lib/http/contract';
import { IssuerProtocol } from '../../lib/oid4vci/protocol/service';
import { issuerProtocolOperations } from '../../lib/oid4vci/protocol/operations';
import { IssuerSecretSource } from '../../lib/oid4vci/protocol/issuer-secrets';
import { draftFromSdJwt, STATUS_BOUND } from '../../lib/oid4vci/supported';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { SL } from '../../lib/status-lists/records';
import { StatusListService } from '../../lib/status-lists/service';
import { keys } from '../../lib/store/keys';
import type { ItemKey } from '../../lib/store/port';
import { BASE, ISSUER, oid4vciFixture, REF, scope } from '../helpers/oid4vci-fixture';
import { SpecWallet } from '../helpers/spec-wallet';

type F = Awaited<ReturnType<typeof oid4vciFixture>>;

/** A second warm instance of the issuer function over the same table. */
const instance = (f: F) => new IssuerProtocol({ store: f.store, events: f.publisher, keyManager: f.keyManager, secrets: new IssuerSecretSource(new LocalSecretDeriver('cd'.repeat(32))), status: null });

const configIds = async (p: IssuerProtocol) => Object.keys((await p.issuerMetadata(scope, ISSUER)).credential_configurations_supported as object).sort();
const displayName = async (p: IssuerProtocol) => ((await p.issuerMetadata(scope, ISSUER)).display as { name: string }[] | undefined)?.[0]?.name;

describe('issuer metadata per instance', () => {
  test('a warm instance reads the wallet record only; the document is the same', async () => {
    const f = await oid4vciFixture();
    const first = await f.protocol.issuerMetadataDocument(scope, ISSUER);
    const query = jest.spyOn(f.store, 'query');
    const get = jest.spyOn(f.store, 'get');
    const again = await f.protocol.issuerMetadataDocument(scope, ISSUER);
    expect(again.body).toBe(first.body);
    expect(again.etag).toBe(first.etag);
    expect(query).not.toHaveBeenCalled();
    expect(get.mock.calls.map((c) => c[0])).toEqual([keys.wallet(scope)]);
  });

  test('two warm instances both see a supported credential created and deleted through the admin service', async () => {
    const f = await oid4vciFixture();
    const other = instance(f);
    expect(await configIds(f.protocol)).toEqual(['Pid']);
    expect(await configIds(other)).toEqual(['Pid']);
    const etag = (await other.issuerMetadataDocument(scope, ISSUER)).etag;

    const added = await f.supported.create(scope, draftFromSdJwt({ id: 'Extra', vct: 'urn:extra', claims: { a: { value_type: 'string' } } }));
    expect(await configIds(f.protocol)).toEqual(['Extra', 'Pid']);
    expect(await configIds(other)).toEqual(['Extra', 'Pid']);
    expect((await other.issuerMetadataDocument(scope, ISSUER)).etag).not.toBe(etag);

    await f.supported.delete(scope, added.supported_cred_id);
    expect(await configIds(f.protocol)).toEqual(['Pid']);
    expect(await configIds(other)).toEqual(['Pid']);
    expect((await other.issuerMetadataDocument(scope, ISSUER)).etag).toBe(etag);
  });

  test('two warm instances both see a changed label', async () => {
    const f = await oid4vciFixture();
    const other = instance(f);
    expect(await displayName(f.protocol)).toBe('w7');
    expect(await displayName(other)).toBe('w7');
    await f.store.write([{ type: 'update', key: keys.wallet(scope), set: { label: 'Renamed' } }]);
    expect(await displayName(f.protocol)).toBe('Renamed');
    expect(await displayName(other)).toBe('Renamed');
  });

  test('a deleted wallet is a 404 on a warm instance', async () => {
    const f = await oid4vciFixture();
    await f.protocol.issuerMetadataDocument(scope, ISSUER);
    await f.protocol.authorizationServerMetadataDocument(scope, ISSUER);
    await f.store.write([{ type: 'delete', key: keys.wallet(scope) }]);
    await expect(f.protocol.issuerMetadataDocument(scope, ISSUER)).rejects.toMatchObject({ status: 404 });
    await expect(f.protocol.authorizationServerMetadataDocument(scope, ISSUER)).rejects.toMatchObject({ status: 404 });
  });
});

describe('metadata endpoints: ETag, 304, Cache-Control', () => {
  const call = (f: F, op: 'getCredentialIssuerMetadata' | 'getAuthorizationServerMetadata', headers: Record<string, string> = {}) =>
    (issuerProtocolOperations(f.protocol, f.refs)[op] as (c: unknown) => Promise<unknown>)({ params: { public_ref: REF }, baseUrl: BASE, request: { method: 'GET', url: ISSUER, headers } });

  test.each(['getCredentialIssuerMetadata', 'getAuthorizationServerMetadata'] as const)('%s: 200 with ETag and no-cache; If-None-Match with it is a 304 without a body and without reading the supported credentials', async (op) => {
    const f = await oid4vciFixture();
    const full = (await call(f, op)) as RawRepresentation;
    expect(full).toBeInstanceOf(RawRepresentation);
    const etag = full.headers.etag!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(full.headers['cache-control']).toBe('public, no-cache');
    expect(JSON.parse(full.body)).toMatchObject(op === 'getCredentialIssuerMetadata' ? { credential_issuer: ISSUER } : { issuer: ISSUER });

    const query = jest.spyOn(f.store, 'query');
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = (await call(f, op, { 'if-none-match': header })) as JsonReply;
      expect(res).toBeInstanceOf(JsonReply);
      expect(res.opts).toEqual({ status: 304, headers: { etag, 'cache-control': 'public, no-cache' } });
      expect(res.body).toBeUndefined();
    }
    expect(query).not.toHaveBeenCalled();
    // Another tag: the document.
    const other = (await call(f, op, { 'if-none-match': '"something-else"' })) as RawRepresentation;
    expect(other).toBeInstanceOf(RawRepresentation);
    expect(other.body).toBe(full.body);
  });

  test('after a change, the old ETag no longer matches: 200 with the new document', async () => {
    const f = await oid4vciFixture();
    const before = (await call(f, 'getCredentialIssuerMetadata')) as RawRepresentation;
    await f.supported.create(scope, draftFromSdJwt({ id: 'Extra', vct: 'urn:extra', claims: { a: { value_type: 'string' } } }));
    const after = (await call(f, 'getCredentialIssuerMetadata', { 'if-none-match': before.headers.etag! })) as RawRepresentation;
    expect(after).toBeInstanceOf(RawRepresentation);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(Object.keys(JSON.parse(after.body).credential_configurations_supported)).toContain('Extra');
  });
});

describe('status-list bindings kept on the configuration record', () => {
  const bindingQueries = (spy: jest.SpiedFunction<F['store']['query']>) => spy.mock.calls.filter((c) => String(c[1]?.skBeginsWith ?? '').startsWith(SL.binding)).length;

  async function issueOne(f: F) {
    const { code } = await f.offer();
    const t = (await f.token(code)) as { access_token: string; c_nonce: string };
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const res = (await f.credential(t.access_token, { credential_configuration_id: 'Pid', proofs: { jwt: [wallet.makeProof({ aud: ISSUER, nonce: t.c_nonce })] } })) as { credentials: { credential: string }[] };
    const payload = JSON.parse(Buffer.from(res.credentials[0]!.credential.split('~')[0]!.split('.')[1]!, 'base64url').toString());
    return payload as { status?: unknown };
  }

  test('never bound: offer and credential without a binding query, no status; bound: the record says so and credentials carry status', async () => {
    const f = await oid4vciFixture({ status: true });
    expect((await f.store.get(oid4vciKeys.supported(scope, f.config.supported_cred_id)))![STATUS_BOUND]).toBe(false);
    const query = jest.spyOn(f.store, 'query');
    expect((await issueOne(f)).status).toBeUndefined();
    expect(bindingQueries(query)).toBe(0);

    const publisher = new StatusListPublisher({ store: f.store, keyManager: f.keyManager, events: f.publisher, refs: f.refs });
    await new StatusListService({ store: f.store, events: f.publisher, publisher }).create(scope, { supported_cred_id: f.config.supported_cred_id, issuer_did: f.did.did }, BASE);
    expect((await f.store.get(oid4vciKeys.supported(scope, f.config.supported_cred_id)))![STATUS_BOUND]).toBe(true);
    expect((await issueOne(f)).status).toMatchObject({ status_list: { idx: expect.any(Number) } });
    expect(bindingQueries(query)).toBeGreaterThan(0);
  });

  test('a record from before the fact was kept (no attribute) still looks for bindings', async () => {
    const f = await oid4vciFixture({ status: true });
    const publisher = new StatusListPublisher({ store: f.store, keyManager: f.keyManager, events: f.publisher, refs: f.refs });
    await new StatusListService({ store: f.store, events: f.publisher, publisher }).create(scope, { supported_cred_id: f.config.supported_cred_id, issuer_did: f.did.did }, BASE);
    await f.store.write([{ type: 'update', key: oid4vciKeys.supported(scope, f.config.supported_cred_id), set: {}, remove: [STATUS_BOUND] }]);
    expect((await issueOne(f)).status).toMatchObject({ status_list: { idx: expect.any(Number) } });
  });

  test('binding a configuration deleted meanwhile is refused and writes nothing', async () => {
    const f = await oid4vciFixture({ status: true });
    const publisher = new StatusListService({ store: f.store, events: f.publisher, publisher: new StatusListPublisher({ store: f.store, keyManager: f.keyManager, events: f.publisher, refs: f.refs }) });
    // The service's existence check passes, then the record goes before the transaction (a race).
    const item = (await f.store.get(oid4vciKeys.supported(scope, f.config.supported_cred_id)))!;
    const get = f.store.get.bind(f.store);
    jest.spyOn(f.store, 'get').mockImplementation(async (key: ItemKey) => (key.SK === item.SK ? item : get(key)));
    await f.store.write([{ type: 'delete', key: oid4vciKeys.supported(scope, f.config.supported_cred_id) }]);
    await expect(publisher.create(scope, { supported_cred_id: f.config.supported_cred_id, issuer_did: f.did.did }, BASE)).rejects.toMatchObject({ status: 400, code: 'unknown_supported_credential' });
    expect([...f.store.items.values()].filter((i) => String(i.SK).startsWith(SL.definition) || String(i.SK).startsWith(SL.binding))).toEqual([]);
  });
});
