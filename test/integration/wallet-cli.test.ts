/**
 * The local wallet (`npm run wallet`, tools/wallet/) against the local runtime, over HTTP only: it
 * redeems offers of the service's OpenID4VCI issuer and answers its OpenID4VP verifier. Outcomes are
 * read back through the admin API (exchange state, the verifier's stored presentation record), so a
 * wallet that sent more than asked, or a flow that did not complete, fails here.
 *
 * The commands run in-process (their functions and `runCli`); one test spawns the real
 * `npm run --silent wallet` to prove the entry point and that `--json` leaves stdout pure JSON.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getListFromStatusListJWT, getStatusListFromJWT } from '@sd-jwt/jwt-status-list';
import { compactDecrypt, decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { eventually } from '../helpers/receiver';
import { ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { FAMILY_NAME_AND_BIRTHDATE, IDENTITY_SUBJECT, IDENTITY_VCT, identityConfiguration, sdJwtVpFormats } from '../helpers/identity-credential';
import { runCli } from '../../tools/wallet/cli';
import type { WalletContext } from '../../tools/wallet/context';
import { present } from '../../tools/wallet/present';
import { redeem } from '../../tools/wallet/redeem';
import { WalletStore } from '../../tools/wallet/store';

const run = promisify(execFile);

const DEGREE_TYPES = ['VerifiableCredential', 'UniversityDegreeCredential'];
const DEGREE_SUBJECT = { name: 'Ada Lovelace', degree: 'BSc Mathematics' };
const JWT_FORMATS = { jwt_vc_json: { alg: ['ES256', 'EdDSA'] }, jwt_vp_json: { alg: ['ES256', 'EdDSA'] } };
/** Given name and locality of the identity credential: two of its five disclosable claims, one nested. */
const IDENTITY_DCQL = { credentials: [{ id: 'identity', format: 'dc+sd-jwt', meta: { vct_values: [IDENTITY_VCT] }, claims: [{ path: ['given_name'] }, { path: ['address', 'locality'] }] }] };
const DEGREE_DCQL = { credentials: [{ id: 'degree', format: 'jwt_vc_json', meta: { type_values: [DEGREE_TYPES] }, claims: [{ path: ['credentialSubject', 'degree'] }] }] };

interface Issuer {
  key: string;
  did: string;
  publicRef: string;
  sd: string;
  jwt: string;
}

let api: TestApi;
let issuer: Issuer;
/** The issuer wallet's public reference (its OpenID4VCI URLs carry it). */
let issuerRef: string;
let verifier: { key: string; did: string };
let dir: string;
let ctx: WalletContext;
const logs: string[] = [];

async function newIssuer(withStatusList: boolean): Promise<Issuer> {
  const t = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'p256' } });
  const sd = await ok(api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: t.key, body: identityConfiguration() }), 'sd-jwt configuration');
  if (withStatusList) await ok(api.call('POST', '/api/v1/status-list/defs', { key: t.key, body: { supported_cred_id: sd.supported_cred_id } }), 'status list');
  const jwt = await ok(
    api.call('POST', '/api/v1/oid4vci/credentials-supported/jwt', {
      key: t.key,
      body: { id: 'Degree', type: DEGREE_TYPES, '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { name: {}, degree: {} }, cryptographic_binding_methods_supported: ['did:key'] },
    }),
    'jwt configuration',
  );
  return { key: t.key, did: t.did, publicRef: t.publicRef, sd: sd.supported_cred_id, jwt: jwt.supported_cred_id };
}

async function offer(from: Issuer, kind: 'sd' | 'jwt', pin?: string): Promise<any> {
  const body = { supported_cred_id: kind === 'sd' ? from.sd : from.jwt, credential_subject: kind === 'sd' ? IDENTITY_SUBJECT : DEGREE_SUBJECT, ...(pin ? { pin } : {}) };
  return ok(api.call('POST', '/api/v1/oid4vci/issue', { key: from.key, body }), 'issue');
}

const exchangeState = async (from: Issuer, id: string) => (await ok(api.call('GET', `/api/v1/oid4vci/exchanges/${id}`, { key: from.key }), 'exchange')).state;

async function request(body: Record<string, unknown>): Promise<any> {
  return ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { vp_formats: sdJwtVpFormats('dc+sd-jwt'), ...body } }), 'request');
}

const record = async (created: any) => ok(api.call('GET', `/api/v1/oid4vp/presentations/${created.presentation.presentation_id}`, { key: verifier.key }), 'presentation');

/** A fresh wallet folder of its own (for tests that count what the wallet holds). */
const folders: string[] = [];
async function freshWallet(): Promise<WalletContext> {
  const folder = await mkdtemp(join(tmpdir(), 'wallet-'));
  folders.push(folder);
  return { store: new WalletStore(folder), log: (l) => logs.push(l) };
}

/** runCli with captured output. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), defaultDir: dir });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

beforeAll(async () => {
  api = await startTestApi();
  issuer = await newIssuer(false);
  issuerRef = issuer.publicRef;
  const v = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'ed25519' } });
  verifier = { key: v.key, did: v.did };
  await ok(api.call('PUT', '/api/v1/settings/trusted-issuers', { key: verifier.key, body: { issuers: [issuer.did] } }), 'trusted issuers');
  dir = await mkdtemp(join(tmpdir(), 'wallet-'));
  ctx = { store: new WalletStore(dir), log: (l) => logs.push(l) };
}, 120_000);

afterAll(async () => {
  await api?.rt.stop();
  await Promise.all([dir, ...folders].filter(Boolean).map((f) => rm(f, { recursive: true, force: true })));
});

beforeEach(() => {
  logs.length = 0;
});

describe('redeem', () => {
  test('an SD-JWT VC offer by reference with a PIN: DPoP-bound token, the credential verified, kept and shown with its claims; the exchange ends accepted', async () => {
    const created = await offer(issuer, 'sd', '4711');
    const result = await redeem(ctx, created.credential_offer_uri, { pin: '4711' });

    expect(result).toMatchObject({ token_type: 'DPoP', dpop: true, notified: [true] });
    expect(result.credentials).toHaveLength(1);
    const c = result.credentials[0]!;
    expect(c).toMatchObject({ format: 'dc+sd-jwt', issuer: issuer.did, vct: IDENTITY_VCT, claims: IDENTITY_SUBJECT, holder_binding: { method: 'jwk' } });
    expect(c.disclosable).toEqual(['/address/locality', '/address/street', '/birthdate', '/family_name', '/given_name']);
    expect(logs.join('\n')).toMatch(/PIN required/);
    expect(logs.join('\n')).toMatch(/DPoP-bound/);

    expect(await exchangeState(issuer, created.exchange.exchange_id)).toBe('accepted');
    const stored = await ctx.store.credential(c.id);
    expect(stored.credential.split('~').length).toBeGreaterThan(5); // every disclosure kept
    expect((await cli(['show', c.id, '--json'])).stdout).toBe(JSON.stringify({ credential: c }));
  }, 60_000);

  test('an offer by value without a PIN, with --no-dpop: a Bearer token', async () => {
    const created = await offer(issuer, 'sd');
    const result = await redeem(ctx, created.credential_offer, { dpop: false });
    expect(result).toMatchObject({ token_type: 'Bearer', dpop: false });
    expect(result.credentials[0]!.claims).toEqual(IDENTITY_SUBJECT);
    expect(await exchangeState(issuer, created.exchange.exchange_id)).toBe('accepted');
  }, 60_000);

  test('the offer JSON itself, and the https offer URL alone, are accepted too', async () => {
    const byJson = await offer(issuer, 'sd');
    expect((await redeem(ctx, JSON.stringify(byJson.offer))).credentials).toHaveLength(1);
    const byUrl = await offer(issuer, 'sd');
    const url = new URL(byUrl.credential_offer_uri).searchParams.get('credential_offer_uri')!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect((await redeem(ctx, url)).credentials).toHaveLength(1);
  }, 60_000);

  test('a jwt_vc_json offer: a VC-JWT whose subject is the holder did:key', async () => {
    const created = await offer(issuer, 'jwt', '1234');
    const result = await redeem(ctx, created.credential_offer_uri, { pin: '1234' });
    const c = result.credentials[0]!;
    expect(c).toMatchObject({ format: 'jwt_vc_json', issuer: issuer.did, types: DEGREE_TYPES, claims: expect.objectContaining(DEGREE_SUBJECT), disclosable: [] });
    expect(c.holder_binding.method).toBe('did:key');
    const payload = decodeJwt((await ctx.store.credential(c.id)).credential);
    expect(payload.sub).toBe(c.holder_binding.did_url!.split('#')[0]);
  }, 60_000);

  test('a wrong PIN: a clear failure, exit 1, nothing kept', async () => {
    const wallet = await freshWallet();
    const created = await offer(issuer, 'sd', '4711');
    await expect(redeem(wallet, created.credential_offer_uri, { pin: '0000' })).rejects.toThrow(/token request was refused: the server answered 400 invalid_grant/);
    expect(await wallet.store.credentials()).toEqual([]);

    const again = await offer(issuer, 'sd', '4711');
    const res = await cli(['redeem', again.credential_offer_uri, '--pin', '9999', '--dir', wallet.store.dir, '--json']);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual({ error: expect.stringMatching(/invalid_grant/), code: 'issuer_error' });
    expect(res.stderr).toMatch(/^wallet: the token request was refused/m);
  }, 60_000);

  test('a PIN the offer needs but was not given: exit 2 saying how to pass it, before any token request', async () => {
    const created = await offer(issuer, 'sd', '4711');
    const res = await cli(['redeem', created.credential_offer_uri]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/this offer needs a PIN.*--pin <numeric, 4 characters>/);
    // Nothing was spent: the code still works.
    expect((await redeem(ctx, created.credential_offer_uri, { pin: '4711' })).credentials).toHaveLength(1);
  }, 60_000);

  test.each([
    ['garbage', () => 'hello world', /not a credential offer/],
    ['JSON that is not an offer', () => '{"credential_issuer": 5}', /resolving the offer/],
    [
      'an offer URI whose offer does not exist',
      () => `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(`${api.rt.url}/oid4vci/${issuerRef}/offers/${'A'.repeat(43)}`)}`,
      /resolving the offer: the server answered 404/,
    ],
    ['an http URL off this machine', () => 'openid-credential-offer://?credential_offer_uri=http%3A%2F%2Fexample.com%2Foffer', /refusing http:\/\/example\.com/],
  ])('%s: exit 1 with a message, no credential', async (_what, input, message) => {
    const wallet = await freshWallet();
    const res = await cli(['redeem', input(), '--dir', wallet.store.dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe('');
    expect(await wallet.store.credentials()).toEqual([]);
  });
});

describe('present', () => {
  test('DCQL: only the two asked-for claims are disclosed; the verifier records presentation-valid with exactly those', async () => {
    const wallet = await freshWallet();
    await redeem(wallet, (await offer(issuer, 'sd')).credential_offer);
    const created = await request({ dcql_query: IDENTITY_DCQL });
    const result = await present(wallet, created.request_uri);

    expect(result).toMatchObject({ accepted: true, query: 'dcql', client_id: `decentralized_identifier:${verifier.did}`, verifier: { status: 200 } });
    expect(result.presented).toEqual([{ query_id: 'identity', credential_id: expect.any(String), format: 'dc+sd-jwt', disclosed: ['/address/locality', '/given_name'] }]);
    const r = await record(created);
    expect(r).toMatchObject({ state: 'presentation-valid', verified: true, errors: null });
    const m = r.matched_credentials.identity;
    expect(m.claims.given_name).toBe('Erika');
    expect(m.claims.address).toEqual({ locality: 'Köln' });
    for (const hidden of ['family_name', 'birthdate']) expect(m.claims[hidden]).toBeUndefined();
    expect([...m.disclosed].sort()).toEqual(['/address/locality', '/given_name']);
  }, 60_000);

  test('Presentation Exchange (the draft request form): the definition’s fields only, with a presentation_submission', async () => {
    const wallet = await freshWallet();
    await redeem(wallet, (await offer(issuer, 'sd')).credential_offer);
    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def: FAMILY_NAME_AND_BIRTHDATE } }), 'definition');
    const created = await request({ pres_def_id: def.pres_def_id, vp_formats: sdJwtVpFormats('vc+sd-jwt') });
    const result = await present(wallet, created.request_uri_draft);

    expect(result).toMatchObject({ accepted: true, query: 'presentation_definition', client_id: verifier.did });
    expect(result.presented[0]!.disclosed).toEqual(['/birthdate', '/family_name']);
    const r = await record(created);
    expect(r).toMatchObject({ state: 'presentation-valid', pres_def_id: def.pres_def_id });
    const m = r.matched_credentials.identity;
    expect(m.claims).toMatchObject({ family_name: 'Mustermann', birthdate: '1964-08-12' });
    expect(m.claims.given_name).toBeUndefined();
    expect([...m.disclosed].sort()).toEqual(['/birthdate', '/family_name']);
  }, 60_000);

  test('jwt_vc_json over DCQL: a VP signed by the holder DID', async () => {
    const wallet = await freshWallet();
    await redeem(wallet, (await offer(issuer, 'jwt')).credential_offer);
    const created = await request({ dcql_query: DEGREE_DCQL, vp_formats: JWT_FORMATS });
    const result = await present(wallet, created.request_uri);
    expect(result).toMatchObject({ accepted: true, presented: [{ query_id: 'degree', format: 'jwt_vc_json', disclosed: [] }] });
    const r = await record(created);
    expect(r).toMatchObject({ state: 'presentation-valid', matched_credentials: { degree: { format: 'jwt_vc_json', issuer: issuer.did } } });
    expect(r.matched_credentials.degree.claims.vc.credentialSubject).toMatchObject(DEGREE_SUBJECT);
  }, 60_000);

  test('jwt_vc_json over Presentation Exchange (draft form): a VP JWT with path_nested in the submission', async () => {
    const wallet = await freshWallet();
    await redeem(wallet, (await offer(issuer, 'jwt')).credential_offer);
    const pres_def = {
      id: 'degree-check',
      input_descriptors: [
        {
          id: 'degree',
          format: { jwt_vc_json: { alg: ['ES256', 'EdDSA'] } },
          constraints: { fields: [{ path: ['$.vc.type', '$.type'], filter: { type: 'array', contains: { const: 'UniversityDegreeCredential' } } }, { path: ['$.vc.credentialSubject.degree', '$.credentialSubject.degree'] }] },
        },
      ],
    };
    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } }), 'definition');
    const created = await request({ pres_def_id: def.pres_def_id, vp_formats: JWT_FORMATS });
    const result = await present(wallet, created.request_uri_draft);
    expect(result).toMatchObject({ accepted: true, query: 'presentation_definition', presented: [{ query_id: 'degree', format: 'jwt_vc_json' }] });
    const r = await record(created);
    expect(r).toMatchObject({ state: 'presentation-valid', matched_credentials: { degree: { format: 'jwt_vc_json', issuer: issuer.did } } });
  }, 60_000);

  test('several matches: the newest unless --credential names one, and the choice is said', async () => {
    const wallet = await freshWallet();
    const first = (await redeem(wallet, (await offer(issuer, 'sd')).credential_offer)).credentials[0]!.id;
    const second = (await redeem(wallet, (await offer(issuer, 'sd')).credential_offer)).credentials[0]!.id;
    expect(second > first).toBe(true);

    logs.length = 0;
    const auto = await present(wallet, (await request({ dcql_query: IDENTITY_DCQL })).request_uri);
    expect(auto.presented[0]!.credential_id).toBe(second);
    expect(logs.join('\n')).toContain(`2 credentials answer 'identity' (${first}, ${second}): picked ${second}, the newest; choose with --credential`);

    const chosen = await present(wallet, (await request({ dcql_query: IDENTITY_DCQL })).request_uri, { credentials: [first.toLowerCase()] });
    expect(chosen).toMatchObject({ accepted: true, presented: [{ credential_id: first }] });
  }, 60_000);

  test('an unknown --credential id, or one that answers nothing: exit 1 before the request is answered', async () => {
    const wallet = await freshWallet();
    const jwtId = (await redeem(wallet, (await offer(issuer, 'jwt')).credential_offer)).credentials[0]!.id;
    await redeem(wallet, (await offer(issuer, 'sd')).credential_offer);
    const created = await request({ dcql_query: IDENTITY_DCQL });

    const unknown = await cli(['present', created.request_uri, '--credential', '01J0000000000000000000000X', '--dir', wallet.store.dir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no credential 01J0000000000000000000000X/);
    expect((await record(created)).state).toBe('request-created'); // not even fetched

    const wrong = await cli(['present', created.request_uri, '--credential', jwtId, '--dir', wallet.store.dir, '--json']);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout)).toEqual({ error: `--credential ${jwtId} answers none of the request's credential queries`, code: 'no_matching_credential' });

    const show = await cli(['show', 'nope', '--dir', wallet.store.dir]);
    expect(show).toMatchObject({ code: 1, stdout: '' });
    expect(show.stderr).toMatch(/no credential "nope"/);
  }, 60_000);

  test('nothing held that matches: a clear failure naming the query', async () => {
    const wallet = await freshWallet();
    await redeem(wallet, (await offer(issuer, 'jwt')).credential_offer);
    await expect(present(wallet, (await request({ dcql_query: IDENTITY_DCQL })).request_uri)).rejects.toMatchObject({ name: 'WalletError', code: 'no_matching_credential' });
    const res = await cli(['present', (await request({ dcql_query: IDENTITY_DCQL })).request_uri, '--dir', wallet.store.dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no held credential answers 'identity' \(dc\+sd-jwt \["https:\/\/credentials\.example\.com\/identity_credential"\]/);
  }, 60_000);

  test('garbage instead of a request URI, and a request whose signature does not match its client id: exit 1', async () => {
    const bad = await cli(['present', 'not a request']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not an OpenID4VP request/);

    const created = await request({ dcql_query: IDENTITY_DCQL });
    const forged = created.request_uri.replace(encodeURIComponent(verifier.did), encodeURIComponent(issuer.did));
    expect(forged).not.toBe(created.request_uri);
    const res = await cli(['present', forged]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/the request could not be resolved/);
  }, 60_000);

  test('a revoked credential: the verifier refuses it (exit 3) and records credential_revoked', async () => {
    const revIssuer = await newIssuer(true);
    await ok(api.call('PUT', '/api/v1/settings/trusted-issuers', { key: verifier.key, body: { issuers: [issuer.did, revIssuer.did] } }), 'trusted issuers');
    const wallet = await freshWallet();
    const created = await offer(revIssuer, 'sd');
    const held = (await redeem(wallet, created.credential_offer)).credentials[0]!;
    const ref = held.status as { status_list: { idx: number; uri: string } };
    expect(ref.status_list.uri).toMatch(/\/status-lists\//);
    expect(getStatusListFromJWT((await wallet.store.credential(held.id)).credential.split('~')[0]!)).toEqual(ref.status_list);

    await ok(api.call('PATCH', `/api/v1/status-list/entries/revoke/${created.exchange.exchange_id}`, { key: revIssuer.key }), 'revoke');
    await eventually(
      async () => {
        const res = await fetch(ref.status_list.uri);
        return res.status === 200 && getListFromStatusListJWT(await res.text()).getStatus(ref.status_list.idx) === 1 ? true : undefined;
      },
      20_000,
      'the published list shows the revocation',
    );
    const req = await request({ dcql_query: IDENTITY_DCQL });
    const res = await cli(['present', req.request_uri, '--dir', wallet.store.dir, '--json']);
    expect(res.code).toBe(3);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ accepted: false, verifier: { status: 400, body: { error: 'invalid_request' } } });
    const r = await record(req);
    expect(r).toMatchObject({ state: 'presentation-invalid', verified: false });
    expect(r.errors.map((e: any) => e.code)).toEqual(['credential_revoked']);
  }, 90_000);
});

describe('present: direct_post.jwt', () => {
  /**
   * The service's verifier answers direct_post only, so this verifier is the test's own, on loopback:
   * a did:jwk that signs the request object and an ECDH-ES key in client_metadata that the wallet
   * must encrypt its response to. The test decrypts what arrives and checks the presentation in it.
   */
  test('the response is encrypted to the verifier’s key, and holds the key-bound presentation with only the asked claims', async () => {
    const wallet = await freshWallet();
    await redeem(wallet, (await offer(issuer, 'sd')).credential_offer);

    const signing = await generateKeyPair('ES256', { extractable: true });
    const encryption = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const { kty, crv, x, y } = await exportJWK(signing.publicKey);
    const did = `did:jwk:${Buffer.from(JSON.stringify({ crv, kty, x, y })).toString('base64url')}`;
    const encJwk = { ...(await exportJWK(encryption.publicKey)), kid: 'enc-1', use: 'enc', alg: 'ECDH-ES' };
    const posted: string[] = [];
    let requestObject = '';
    const server = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/request') {
        res.writeHead(200, { 'content-type': 'application/oauth-authz-req+jwt' }).end(requestObject);
        return;
      }
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        posted.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const clientId = `decentralized_identifier:${did}`;
      const nonce = randomBytes(16).toString('base64url');
      requestObject = await new SignJWT({
        client_id: clientId,
        response_type: 'vp_token',
        response_mode: 'direct_post.jwt',
        response_uri: `${base}/response`,
        nonce,
        state: 'st-1',
        dcql_query: IDENTITY_DCQL,
        client_metadata: { jwks: { keys: [encJwk] }, vp_formats_supported: { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] } }, encrypted_response_enc_values_supported: ['A128GCM'] },
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', kid: `${did}#0` })
        .setAudience('https://self-issued.me/v2')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(signing.privateKey);

      const result = await present(wallet, `openid4vp://?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(`${base}/request`)}`);
      expect(result).toMatchObject({ accepted: true, client_id: clientId, presented: [{ query_id: 'identity', disclosed: ['/address/locality', '/given_name'] }] });

      expect(posted).toHaveLength(1);
      const form = new URLSearchParams(posted[0]);
      expect([...form.keys()]).toEqual(['response']);
      const { plaintext, protectedHeader } = await compactDecrypt(form.get('response')!, encryption.privateKey);
      expect(protectedHeader).toMatchObject({ alg: 'ECDH-ES', enc: 'A128GCM', kid: 'enc-1' });
      const answer = JSON.parse(new TextDecoder().decode(plaintext));
      expect(answer.state).toBe('st-1');
      const sdJwt: string = answer.vp_token.identity[0];
      const parts = sdJwt.split('~');
      expect(parts).toHaveLength(4); // issuer JWT, two disclosures, KB-JWT
      const kb = decodeJwt(parts[3]!);
      expect(kb).toMatchObject({ aud: clientId, nonce });
    } finally {
      server.close();
    }
  }, 60_000);
});

describe('list, show and the entry point', () => {
  test('list --json: every credential with its id; show prints the decoded claims', async () => {
    const wallet = await freshWallet();
    const a = (await redeem(wallet, (await offer(issuer, 'sd')).credential_offer)).credentials[0]!;
    const b = (await redeem(wallet, (await offer(issuer, 'jwt')).credential_offer)).credentials[0]!;
    const list = await cli(['list', '--json', '--dir', wallet.store.dir]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({
      credentials: [
        { id: a.id, format: 'dc+sd-jwt', issuer: issuer.did, vct: IDENTITY_VCT, types: null, received_at: a.received_at },
        { id: b.id, format: 'jwt_vc_json', issuer: issuer.did, vct: null, types: DEGREE_TYPES, received_at: b.received_at },
      ],
    });
    const show = await cli(['show', a.id, '--dir', wallet.store.dir]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`issuer      ${issuer.did}`);
    expect(show.stdout).toContain('"family_name": "Mustermann"');
    expect((await cli(['list', '--dir', (await freshWallet()).store.dir])).stdout).toMatch(/^No credentials in /);
  }, 60_000);

  test('`npm run --silent wallet -- redeem … --json` prints exactly one JSON object on stdout, progress on stderr', async () => {
    const wallet = await freshWallet();
    const created = await offer(issuer, 'sd', '2468');
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'wallet', '--', 'redeem', created.credential_offer_uri, '--pin', '2468', '--json'], {
      env: { ...process.env, WALLET_DIR: wallet.store.dir },
      timeout: 60_000,
    });
    const out = JSON.parse(stdout);
    expect(out.credentials[0]).toMatchObject({ format: 'dc+sd-jwt', claims: IDENTITY_SUBJECT });
    expect(stderr).toMatch(/access token: DPoP/);
    expect((await wallet.store.credentials()).map((c) => c.id)).toEqual([out.credentials[0].id]);

    const failed = await run('npm', ['run', '--silent', 'wallet', '--', 'show', 'missing', '--json'], { env: { ...process.env, WALLET_DIR: wallet.store.dir } }).catch((e) => e);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ code: 'unknown_credential' });
  }, 90_000);
});
