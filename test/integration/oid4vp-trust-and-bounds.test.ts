/**
 * OID4VP: what a `presentation-valid` means and what one anonymous response may cost.
 *
 * - Trust: a credential anyone can make (a fresh did:jwk, the right `vct`) is refused as
 *   `untrusted_issuer` unless the verifier trusts its issuer: listed in the trusted-issuers setting,
 *   pinned by the request, `"*"`, or a DID of the verifier's own wallet. Status lists must be signed
 *   by the credential's issuer.
 * - Bounds: the issue's case (12 credentials whose did:web issuers answer after 2.5 s) is refused
 *   before any fetch; within the bounds, keys are fetched in parallel under one deadline
 *   (VERIFICATION_LIMITS.deadlineMs), which cancels the fetches in flight and ends the presentation
 *   `verification_timeout` with a 400. Issuers are loopback servers reached through the SSRF guard's
 *   loopback allowance (the local runtime's), so nothing leaves the machine.
 * - Patterns: a definition's `pattern` runs on RE2 (linear time), through the public endpoint too.
 */
import { sign as nodeSign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs';
import { VERIFICATION_LIMITS } from '../../lib/oid4vp/protocol/verifier';
import { signIetfStatusListToken } from '../../lib/status-lists/tokens';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { IDENTITY_SUBJECT, IDENTITY_VCT, identityConfiguration, sdJwtVpFormats } from '../helpers/identity-credential';
import { expectError, ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';
import { generateHolderKey, SpecWallet, type HolderKey, type HttpResult } from '../helpers/spec-wallet';
import { answerDcql, answerPresentationDefinition, postDirectPost, resolveAuthorizationRequest, type AnswerOptions, type DcqlQuery } from '../helpers/spec-vp-wallet';

// The runtime runs in this process: whatever its SSRF guard decides, its sockets reach loopback only.
fenceTestNetwork();

const VCT = IDENTITY_VCT;
const FORMATS = sdJwtVpFormats('dc+sd-jwt');
const SLOW_MS = 2500;
const identityQuery = (id = 'identity', extraClaims: Record<string, unknown>[] = []) => ({
  id,
  format: 'dc+sd-jwt',
  meta: { vct_values: [VCT] },
  claims: [{ path: ['given_name'] }, ...extraClaims],
});
const DCQL = { credentials: [identityQuery()] };

let api: TestApi;
let verifier: { key: string; walletId: number; did: string };
let holder: HolderKey;
let docs: DocumentServer;

beforeAll(async () => {
  [api, docs] = await Promise.all([startTestApi(), startDocumentServer()]);
  verifier = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'ed25519' } });
  holder = generateHolderKey('ES256');
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.rt.stop(), docs?.close()]);
});

// ---- issuers of the test's own making --------------------------------------------------------

interface TestIssuer {
  readonly did: string;
  readonly kid: string;
  readonly key: HolderKey;
}

/** A fresh P-256 key named by a did:jwk: what anyone can make. */
function didJwkIssuer(): TestIssuer {
  const key = generateHolderKey('ES256');
  return { did: key.didJwk, kid: key.didJwkUrl, key };
}

/** A did:web issuer on the loopback document server (`/<name>/did.json`), answering after `delayMs`. */
function didWebIssuer(name: string, delayMs = 0): TestIssuer {
  const key = generateHolderKey('ES256');
  const did = `did:web:127.0.0.1%3A${docs.port}:${name}`;
  const kid = `${did}#key-1`;
  const document = { id: did, verificationMethod: [{ id: kid, type: 'JsonWebKey2020', controller: did, publicKeyJwk: key.publicJwk }], assertionMethod: [kid] };
  docs.serve(`/${name}/did.json`, { body: JSON.stringify(document), headers: { 'content-type': 'application/did+json' }, delayMs });
  return { did, kid, key };
}

/** An SD-JWT VC of the identity type from `issuer`, bound to the holder's key (given_name and address disclosable). */
async function credentialFrom(issuer: TestIssuer, extra: Record<string, unknown> = {}): Promise<string> {
  const sdjwt = new SDJwtInstance({ signer: await ES256.getSigner(issuer.key.privateKey.export({ format: 'jwk' })), signAlg: 'ES256', hasher: digest, hashAlg: 'sha-256', saltGenerator: generateSalt });
  const now = Math.floor(Date.now() / 1000);
  return sdjwt.issue(
    { iss: issuer.did, vct: VCT, iat: now - 60, cnf: { jwk: holder.publicJwk }, given_name: IDENTITY_SUBJECT.given_name, address: { ...IDENTITY_SUBJECT.address }, ...extra },
    { _sd: ['given_name'], address: { _sd: ['street', 'locality'] } } as never,
    { header: { typ: 'dc+sd-jwt', kid: issuer.kid } },
  );
}

/** An IETF Token Status List at `path` on the document server, signed by `signer` (all entries valid). */
async function serveStatusList(path: string, signer: TestIssuer, delayMs = 0): Promise<string> {
  const url = `${docs.origin}${path}`;
  const token = await signIetfStatusListToken(
    { url, issuer: signer.did, purpose: 'revocation', listSize: 1024, statusSize: 1, entries: [], issuedAt: new Date(Date.now() - 1000), expiresAt: new Date(Date.now() + 3600_000), ttlSeconds: 60 },
    { alg: 'ES256', kid: signer.kid, sign: async (data) => nodeSign('sha256', data, { key: signer.key.privateKey, dsaEncoding: 'ieee-p1363' }) },
  );
  docs.serve(path, { body: token, headers: { 'content-type': 'application/statuslist+jwt' }, delayMs });
  return url;
}

// ---- the verifier ----------------------------------------------------------------------------

async function trustIssuers(issuers: string[]): Promise<void> {
  await ok(api.call('PUT', '/api/v1/settings/trusted-issuers', { key: verifier.key, body: { issuers } }), 'trusted issuers');
}

async function presentation(id: string) {
  return ok(api.call('GET', `/api/v1/oid4vp/presentations/${id}`, { key: verifier.key }), 'presentation');
}

/** A DCQL request, fetched by the wallet, answered with `credentials`: the HTTP answer, its time and the record. */
async function present(dcql_query: DcqlQuery | Record<string, unknown>, credentials: Record<string, string | string[]>, opts: AnswerOptions = {}) {
  const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { dcql_query, vp_formats: FORMATS } }), 'request');
  const req = await resolveAuthorizationRequest(created.request_uri);
  const { fields } = await answerDcql(req.payload, credentials, holder, { ...opts, dryRun: true });
  // The endpoint's answer time: the POST alone, the wallet's signing done beforehand.
  const t0 = performance.now();
  const res = await postDirectPost(req.payload.response_uri!, fields);
  const ms = performance.now() - t0;
  return { res, ms, record: await presentation(created.presentation.presentation_id) };
}

function expectRefused(out: { res: HttpResult; record: any }, code: string): void {
  expect({ status: out.res.status, error: out.res.body?.error }).toEqual({ status: 400, error: 'invalid_request' });
  expect(out.record).toMatchObject({ state: 'presentation-invalid', verified: false, matched_credentials: null });
  expect(out.record.errors.map((e: any) => e.code)).toEqual([code]);
}

function expectValid(out: { res: HttpResult; record: any }): void {
  expect(out.res.status).toBe(200);
  expect(out.record).toMatchObject({ state: 'presentation-valid', verified: true, errors: null });
}

// ---------------------------------------------------------------------------------------------

describe('trust: who a presentation-valid vouches for', () => {
  test('a self-made credential (fresh did:jwk, the right vct) → untrusted_issuer; accepted when listed, pinned or "*"', async () => {
    const anyone = didJwkIssuer();
    const credential = await credentialFrom(anyone);

    await trustIssuers([]);
    const refused = await present(DCQL, { identity: credential });
    expectRefused(refused, 'untrusted_issuer');
    expect(refused.record.errors[0]).toMatchObject({ credential_id: 'identity', detail: expect.stringContaining(anyone.did) });

    // (a) listed in the setting
    await trustIssuers(['did:web:someone-else.example', anyone.did]);
    const listed = await present(DCQL, { identity: credential });
    expectValid(listed);
    expect(listed.record.matched_credentials.identity).toMatchObject({ issuer: anyone.did, vct: VCT, issuer_trust: 'trusted_issuers_setting' });

    // (b) pinned by the request: DCQL values on iss — and a pin naming someone else trusts no one
    await trustIssuers([]);
    const pinned = await present({ credentials: [identityQuery('identity', [{ path: ['iss'], values: [anyone.did] }])] }, { identity: credential });
    expectValid(pinned);
    expect(pinned.record.matched_credentials.identity.issuer_trust).toBe('pinned_by_request');
    const pinnedElsewhere = await present({ credentials: [identityQuery('identity', [{ path: ['iss'], values: ['did:web:someone-else.example'] }])] }, { identity: credential }, { skipMatching: true });
    expectRefused(pinnedElsewhere, 'untrusted_issuer');

    // (b') pinned by a definition: a `const` filter on $.iss, in both forms of the request
    const pres_def = {
      id: 'pinned',
      input_descriptors: [{ id: 'identity', format: { 'dc+sd-jwt': {} }, constraints: { fields: [{ path: ['$.vct'], filter: { type: 'string', const: VCT } }, { path: ['$.iss'], filter: { type: 'string', const: anyone.did } }, { path: ['$.given_name'] }] } }],
    };
    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } }), 'definition');
    for (const form of ['v1', 'draft'] as const) {
      const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { pres_def_id: def.pres_def_id, vp_formats: FORMATS } }), 'request');
      const req = await resolveAuthorizationRequest(form === 'v1' ? created.request_uri : created.request_uri_draft);
      const res = form === 'v1' ? await answerDcql(req.payload, { identity: credential }, holder) : await answerPresentationDefinition(req.payload, credential, holder);
      expect(res.status).toBe(200);
      expect((await presentation(created.presentation.presentation_id)).matched_credentials.identity.issuer_trust).toBe('pinned_by_request');
    }

    // An issuer no DID of the wallet can be (over 1,000 characters) is refused as untrusted, not looked up.
    const long = { ...anyone, did: `did:example:${'a'.repeat(1500)}`, kid: `did:example:${'a'.repeat(1500)}#0` };
    expectRefused(await present(DCQL, { identity: await credentialFrom(long) }), 'untrusted_issuer');

    // (c) "*": any issuer
    await trustIssuers(['*']);
    const any = await present(DCQL, { identity: credential });
    expectValid(any);
    expect(any.record.matched_credentials.identity.issuer_trust).toBe('any_issuer');
    await trustIssuers([]);
  }, 90_000);

  test("a credential from the verifier wallet's own issuer DID is trusted with no setting (own_did)", async () => {
    await trustIssuers([]);
    const sd = await ok(api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: verifier.key, body: identityConfiguration() }), 'sd-jwt configuration');
    const offer = await ok(api.call('POST', '/api/v1/oid4vci/issue', { key: verifier.key, body: { supported_cred_id: sd.supported_cred_id, credential_subject: IDENTITY_SUBJECT } }), 'issue');
    const received = await new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(offer.credential_offer);
    const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { dcql_query: DCQL, vp_formats: FORMATS } }), 'request');
    const req = await resolveAuthorizationRequest(created.request_uri);
    expect((await answerDcql(req.payload, { identity: received.credentials[0]! }, received.holderKeys[0]!)).status).toBe(200);
    const record = await presentation(created.presentation.presentation_id);
    expect(record.matched_credentials.identity).toMatchObject({ issuer: verifier.did, issuer_trust: 'own_did' });
  }, 60_000);

  test('a status list signed by another key than the credential issuer’s → status_signer_mismatch; signed by the issuer → valid', async () => {
    const issuer = didJwkIssuer();
    const stranger = didJwkIssuer();
    await trustIssuers([issuer.did]);
    const foreignList = await serveStatusList('/lists/foreign', stranger);
    const refused = await present(DCQL, { identity: await credentialFrom(issuer, { status: { status_list: { idx: 3, uri: foreignList } } }) });
    expectRefused(refused, 'status_signer_mismatch');
    expect(refused.record.errors[0].detail).toContain(stranger.did);

    const ownList = await serveStatusList('/lists/own', issuer);
    expectValid(await present(DCQL, { identity: await credentialFrom(issuer, { status: { status_list: { idx: 3, uri: ownList } } }) }));
    await trustIssuers([]);
  }, 60_000);
});

describe('bounded verification: one anonymous response cannot hold the verifier', () => {
  /** n did:web issuers on the document server that answer after SLOW_MS, each with a credential (and, with `lists`, a slow status list of its own). */
  async function slowIssuers(tag: string, n: number, lists = false) {
    return Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const issuer = didWebIssuer(`${tag}-${i}`, SLOW_MS);
        const status = lists ? { status: { status_list: { idx: 1, uri: await serveStatusList(`/${tag}-${i}/status`, issuer, SLOW_MS) } } } : {};
        return { issuer, credential: await credentialFrom(issuer, status) };
      }),
    );
  }
  const hitsUnder = (tag: string) => docs.requests.filter((r) => r.path.startsWith(`/${tag}-`)).length;
  const queries = (n: number) => ({ credentials: Array.from({ length: n }, (_, i) => identityQuery(`c${i}`)) });
  const byQuery = (creds: { credential: string }[]) => Object.fromEntries(creds.map((c, i) => [`c${i}`, c.credential]));

  test('the issue’s case: 12 credentials for one query (no `multiple`), slow did:web issuers → invalid_submission at once, nothing fetched', async () => {
    const creds = await slowIssuers('one-query', 12);
    await trustIssuers(['*']);
    const out = await present(DCQL, { identity: creds.map((c) => c.credential) }, { skipMatching: true });
    // Measured: 35 ms (60 ms with the machine under load); the issue saw 29 s and a 500. The bound leaves
    // room for a loaded CI machine and still catches that.
    expect(out.ms).toBeLessThan(5000);
    expectRefused(out, 'invalid_submission');
    expect(hitsUnder('one-query')).toBe(0);
    await trustIssuers([]);
  }, 60_000);

  test('the same 12 slow issuers, not trusted → untrusted_issuer at once, nothing fetched', async () => {
    const creds = await slowIssuers('untrusted', 12);
    await trustIssuers([]);
    const out = await present(queries(12), byQuery(creds));
    // Measured: 40 ms (330 ms under load: twelve own-DID reads); fetching the slow issuers took 29 s.
    expect(out.ms).toBeLessThan(5000);
    expectRefused(out, 'untrusted_issuer');
    expect(hitsUnder('untrusted')).toBe(0);
  }, 60_000);

  test('12 credentials from 12 trusted did:web issuers answering after 2.5 s: fetched in parallel, valid in about 2.5 s', async () => {
    const creds = await slowIssuers('parallel', 12);
    await trustIssuers(creds.map((c) => c.issuer.did));
    const out = await present(queries(12), byQuery(creds));
    // One after another this took 12 × 2.5 s; side by side, one issuer's delay: measured 2.59 s (3.1 s under load).
    expect(out.ms).toBeGreaterThanOrEqual(SLOW_MS);
    expect(out.ms).toBeLessThan(VERIFICATION_LIMITS.deadlineMs);
    expectValid(out);
    expect(Object.keys(out.record.matched_credentials)).toHaveLength(12);
    await trustIssuers([]);
  }, 60_000);

  test('…and each with a status list on the same slow host (2.5 s + 2.5 s): verification_timeout at the deadline, a 400, the fetches in flight cancelled', async () => {
    const creds = await slowIssuers('deadline', 12, true);
    await trustIssuers(creds.map((c) => c.issuer.did));
    const out = await present(queries(12), byQuery(creds));
    // The deadline (4 s) plus the request's own reads and writes: measured 4.04 s (4.14 s under load).
    expect(out.ms).toBeGreaterThanOrEqual(VERIFICATION_LIMITS.deadlineMs);
    expect(out.ms).toBeLessThan(VERIFICATION_LIMITS.deadlineMs + 1500);
    expectRefused(out, 'verification_timeout');
    // The 12 list fetches were under way when the deadline passed: the verifier hung up on each.
    expect(docs.abandoned.filter((p) => p.startsWith('/deadline-') && p.endsWith('/status')).sort()).toEqual(creds.map((_, i) => `/deadline-${i}/status`).sort());
    await trustIssuers([]);
  }, 60_000);

  test(`more than ${VERIFICATION_LIMITS.issuers} distinct issuers, or more than ${VERIFICATION_LIMITS.credentials} credentials → limits_exceeded, nothing fetched`, async () => {
    const creds = await slowIssuers('limits', VERIFICATION_LIMITS.issuers + 1);
    await trustIssuers(['*']);
    const tooManyIssuers = await present(queries(creds.length), byQuery(creds));
    expectRefused(tooManyIssuers, 'limits_exceeded');
    expect(tooManyIssuers.record.errors[0].detail).toContain(`${VERIFICATION_LIMITS.issuers + 1} distinct issuers`);

    const one = creds[0]!;
    const many = Array.from({ length: VERIFICATION_LIMITS.credentials + 1 }, () => one);
    const tooManyCredentials = await present(queries(many.length), byQuery(many));
    expectRefused(tooManyCredentials, 'limits_exceeded');
    expect(tooManyCredentials.record.errors[0].detail).toContain(`${VERIFICATION_LIMITS.credentials + 1} credentials`);
    expect(hitsUnder('limits')).toBe(0);
    await trustIssuers([]);
  }, 60_000);
});

describe('linear-time patterns', () => {
  test('`^(a+)+$` against a wallet’s "a"×27 + "!" answers in milliseconds through the response endpoint (constraints_not_met)', async () => {
    const issuer = didJwkIssuer();
    await trustIssuers([issuer.did]);
    const pres_def = {
      id: 'redos',
      input_descriptors: [{ id: 'identity', format: { 'dc+sd-jwt': {} }, constraints: { fields: [{ path: ['$.vct'], filter: { type: 'string', const: VCT } }, { path: ['$.given_name'], filter: { type: 'string', pattern: '^(a+)+$' } }] } }],
    };
    const def = await ok(api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } }), 'definition');
    // 29 a's: four times the backtracking of the issue's 27, so that a 2 s bound catches it on any machine.
    const credential = await credentialFrom(issuer, { given_name: `${'a'.repeat(29)}!` });
    const created = await ok(api.call('POST', '/api/v1/oid4vp/request', { key: verifier.key, body: { pres_def_id: def.pres_def_id, vp_formats: FORMATS } }), 'request');
    const req = await resolveAuthorizationRequest(created.request_uri_draft);
    const { fields } = await answerPresentationDefinition(req.payload, credential, holder, { skipMatching: true, dryRun: true });
    const t0 = performance.now();
    const res = await postDirectPost(req.payload.response_uri!, fields);
    const ms = performance.now() - t0;
    // V8's backtracking engine took 2.3 s on 27 a's in the issue (9.7 s on this machine), so about 9 s
    // on this value; RE2, the whole request: measured 30 ms (70 ms under load).
    expect(ms).toBeLessThan(2000);
    expectRefused({ res, record: await presentation(created.presentation.presentation_id) }, 'constraints_not_met');
    await trustIssuers([]);
  }, 60_000);

  test('a definition whose pattern RE2 cannot evaluate (backreference, lookahead) → 400 invalid_presentation_definition naming the filter', async () => {
    for (const pattern of ['^(a)\\1$', '^(?=a)a$']) {
      const pres_def = { id: 'x', input_descriptors: [{ id: 'identity', format: { 'dc+sd-jwt': {} }, constraints: { fields: [{ path: ['$.vct'], filter: { type: 'string', const: VCT } }, { path: ['$.given_name'], filter: { type: 'string', pattern } }] } }] };
      const res = await api.call('POST', '/api/v1/oid4vp/presentation-definitions', { key: verifier.key, body: { pres_def } });
      expectError(res, 400, 'invalid_presentation_definition');
      expect(res.body.details).toEqual([{ path: 'pres_def.input_descriptors[0].constraints.fields[1].filter', message: expect.stringMatching(/backreference|lookahead/) }]);
    }
  });
});
