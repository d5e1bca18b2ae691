import { deflateSync, gzipSync } from 'node:zlib';
import { SignJWT } from 'jose';
import { guardedFetcher } from '../../lib/adapters/guarded-http';
import { FetchCache } from '../../lib/oid4vp/verification/fetch-cache';
import { createIssuerKeyResolver } from '../../lib/oid4vp/verification/issuer-keys';
import { createStatusChecker, type StatusCheckerDeps } from '../../lib/oid4vp/verification/status';
import { PresentationInvalidError, type StatusChecker } from '../../lib/oid4vp/verification/types';
import type { StatusEntries, StatusSize } from '../../lib/status-lists/encoding';
import { signIetfStatusListToken, signW3cStatusListCredential, w3cStatusEntry, type StatusPurpose } from '../../lib/status-lists/tokens';
import { ed25519Issuer, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { fenceTestNetwork, loopbackOnlyRequest } from '../helpers/loopback-only';
import { eventually } from '../helpers/receiver';

// Whatever the guard decides, nothing here connects outside loopback (the fence throws first).
fenceTestNetwork();

const DAY = 24 * 3600 * 1000;
const issuer = ed25519Issuer();
/** The credentials whose status is read are this issuer's, as its lists are. */
const BY = { issuer: issuer.did };
const loopbackFetch = guardedFetcher({ allowLoopback: true, allowHttp: true, timeoutMs: 2000, maxBytes: 1024 * 1024 });

let server: DocumentServer;
let nowMs: number;
beforeAll(async () => {
  server = await startDocumentServer();
});
afterAll(() => server.close());
beforeEach(() => {
  nowMs = Date.now();
});

function checker(overrides: Partial<StatusCheckerDeps> = {}): StatusChecker {
  const fetch = overrides.fetch ?? loopbackFetch;
  const now = () => new Date(nowMs);
  return createStatusChecker({
    fetch,
    // The real issuer key resolver: the lists are signed by a did:jwk, resolved without a network.
    resolveIssuerKey: createIssuerKeyResolver({ didResolver: { resolve: async () => null }, fetch }),
    now,
    cache: new FetchCache({ maxEntries: 50, now: () => nowMs }),
    ...overrides,
  });
}

let seq = 0;
const freshPath = (name: string) => `/lists/${name}-${++seq}`;

interface ListOptions {
  readonly entries?: StatusEntries;
  readonly statusSize?: StatusSize;
  readonly listSize?: number;
  readonly purpose?: StatusPurpose;
  readonly url?: string;
  readonly signer?: ReturnType<typeof issuer.signer>;
  /** The list's issuer (`iss` / `issuer`) when not the credentials' issuer. */
  readonly issuerDid?: string;
  readonly issuedAt?: Date;
  readonly expiresAt?: Date;
  readonly ttlSeconds?: number;
  readonly headers?: Record<string, string>;
  readonly statusMessage?: { status: string; message: string }[];
}

function input(path: string, o: ListOptions) {
  return {
    url: o.url ?? `${server.origin}${path}`,
    issuer: o.issuerDid ?? issuer.did,
    purpose: o.purpose ?? 'revocation',
    listSize: o.listSize ?? 1024,
    statusSize: o.statusSize ?? 1,
    entries: o.entries ?? [],
    issuedAt: o.issuedAt ?? new Date(nowMs - 1000),
    expiresAt: o.expiresAt ?? new Date(nowMs + DAY),
    ttlSeconds: o.ttlSeconds ?? 60,
    ...(o.statusMessage ? { statusMessage: o.statusMessage } : {}),
  };
}

/** An IETF Status List Token built by the service's own publication code, served at a fresh path. */
async function serveIetf(name: string, o: ListOptions = {}): Promise<string> {
  const path = freshPath(name);
  const token = await signIetfStatusListToken(input(path, o), o.signer ?? issuer.signer());
  server.serve(path, { body: token, headers: { 'content-type': 'application/statuslist+jwt', ...o.headers } });
  return `${server.origin}${path}`;
}

async function serveW3c(name: string, o: ListOptions = {}): Promise<string> {
  const path = freshPath(name);
  const token = await signW3cStatusListCredential(input(path, o), o.signer ?? issuer.signer());
  server.serve(path, { body: token, headers: { 'content-type': 'application/vc+jwt', ...o.headers } });
  return `${server.origin}${path}`;
}

const hits = (url: string) => server.hits(new URL(url).pathname);

async function refusal(p: Promise<unknown>): Promise<PresentationInvalidError> {
  const err = await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PresentationInvalidError);
  expect((err as PresentationInvalidError).reason).toBe('status_unavailable');
  return err as PresentationInvalidError;
}

describe('IETF Token Status List', () => {
  test('valid, revoked (1), suspended (2) and other values at their indexes (2-bit list)', async () => {
    const uri = await serveIetf('ietf2', { statusSize: 2, entries: [[3, 1], [5, 2], [6, 3]] });
    const c = checker();
    expect(await c.ietf({ uri, idx: 3 }, BY)).toEqual({ value: 1, meaning: 'revoked' });
    expect(await c.ietf({ uri, idx: 5 }, BY)).toEqual({ value: 2, meaning: 'suspended' });
    expect(await c.ietf({ uri, idx: 6 }, BY)).toEqual({ value: 3, meaning: 'other' });
    for (const idx of [0, 2, 4, 7, 1023]) expect(await c.ietf({ uri, idx }, BY)).toEqual({ value: 0, meaning: 'valid' });
    expect(server.requests.find((r) => r.path === new URL(uri).pathname)!.headers.accept).toBe('application/statuslist+jwt');
  });

  test.each([1, 2, 4, 8] as const)('%i-bit entries are read from their own bits only', async (bits) => {
    const max = 2 ** bits - 1;
    const uri = await serveIetf(`bits${bits}`, { statusSize: bits, entries: [[8, max], [10, 1]] });
    const c = checker();
    expect((await c.ietf({ uri, idx: 8 }, BY)).value).toBe(max);
    expect((await c.ietf({ uri, idx: 7 }, BY)).value).toBe(0);
    expect((await c.ietf({ uri, idx: 9 }, BY)).value).toBe(0);
    expect((await c.ietf({ uri, idx: 10 }, BY)).value).toBe(1);
  });

  test("the draft's own example list (bits 1, bytes 0xB9 0xA3) reads as the draft says", async () => {
    const path = freshPath('draft-example');
    const uri = `${server.origin}${path}`;
    const iat = Math.floor(nowMs / 1000);
    const token = await new SignJWT({ sub: uri, iat, exp: iat + 3600, status_list: { bits: 1, lst: 'eNrbuRgAAhcBXQ' } })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'statuslist+jwt', kid: `${issuer.did}#0` })
      .setIssuer(issuer.did)
      .sign(issuer.privateKey);
    server.serve(path, { body: token });
    const c = checker();
    const expected = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1];
    const got = [];
    for (let idx = 0; idx < 16; idx++) got.push((await c.ietf({ uri, idx }, BY)).value);
    expect(got).toEqual(expected);
    expect((await refusal(c.ietf({ uri, idx: 16 }, BY))).detail).toMatch(/outside/);
  });

  test('a list that inflates past 16 MiB is refused (a small body must not become gigabytes)', async () => {
    const path = freshPath('bomb');
    const uri = `${server.origin}${path}`;
    const iat = Math.floor(nowMs / 1000);
    const lst = deflateSync(Buffer.alloc(17 * 1024 * 1024)).toString('base64url');
    const token = await new SignJWT({ sub: uri, iat, exp: iat + 3600, status_list: { bits: 1, lst } })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'statuslist+jwt', kid: `${issuer.did}#0` })
      .setIssuer(issuer.did)
      .sign(issuer.privateKey);
    server.serve(path, { body: token });
    expect((await refusal(checker().ietf({ uri, idx: 0 }, BY))).detail).toMatch(/does not decompress/);
  });

  test('an index past the end of the list is status_unavailable', async () => {
    const uri = await serveIetf('short', { listSize: 16 });
    expect((await refusal(checker().ietf({ uri, idx: 16 }, BY))).detail).toMatch(/index 16 is outside/);
  });

  test('a list signed by another key than its kid names is status_unavailable', async () => {
    const uri = await serveIetf('forged', { signer: ed25519Issuer().signer(`${issuer.did}#0`), entries: [[1, 1]] });
    expect((await refusal(checker().ietf({ uri, idx: 1 }, BY))).detail).toMatch(/signature does not verify/);
  });

  test('a list whose sub is another URL is status_unavailable (no list served for another)', async () => {
    const uri = await serveIetf('wrong-sub', { url: `${server.origin}/lists/another` });
    expect((await refusal(checker().ietf({ uri, idx: 0 }, BY))).detail).toMatch(/sub/);
  });

  test('an expired list is status_unavailable', async () => {
    const uri = await serveIetf('expired', { issuedAt: new Date(nowMs - 2 * DAY), expiresAt: new Date(nowMs - DAY) });
    expect((await refusal(checker().ietf({ uri, idx: 0 }, BY))).detail).toMatch(/expired/);
  });

  test('a W3C credential served where an IETF token is expected is refused by its typ', async () => {
    const uri = await serveW3c('typ-confusion');
    expect((await refusal(checker().ietf({ uri, idx: 0 }, BY))).detail).toMatch(/typ vc\+jwt/);
  });

  test('an error status, and a body that is not a JWT, are status_unavailable', async () => {
    const path = freshPath('missing');
    expect((await refusal(checker().ietf({ uri: `${server.origin}${path}`, idx: 0 }, BY))).detail).toMatch(/answered 404/);
    server.serve(path, { body: 'hello' });
    expect((await refusal(checker().ietf({ uri: `${server.origin}${path}`, idx: 0 }, BY))).detail).toMatch(/not a JWT/);
  });
});

describe('W3C Bitstring Status List', () => {
  const entry = (url: string, index: number, purpose: StatusPurpose = 'revocation', statusSize: StatusSize = 1, statusMessage?: { status: string; message: string }[]) =>
    w3cStatusEntry({ url, index, purpose, statusSize, ...(statusMessage ? { statusMessage } : {}) });

  test('a set bit on a revocation list is revoked, a clear one valid', async () => {
    const url = await serveW3c('revocation', { entries: [[4, 1], [1023, 1]] });
    const c = checker();
    expect(await c.w3c(entry(url, 4), BY)).toEqual({ value: 1, meaning: 'revoked' });
    expect(await c.w3c(entry(url, 1023), BY)).toEqual({ value: 1, meaning: 'revoked' });
    for (const i of [0, 3, 5, 8]) expect(await c.w3c(entry(url, i), BY)).toEqual({ value: 0, meaning: 'valid' });
    expect(hits(url)).toBe(1);
  });

  test('a set bit on a suspension list is suspended', async () => {
    const url = await serveW3c('suspension', { purpose: 'suspension', entries: [[7, 1]] });
    const c = checker();
    expect(await c.w3c(entry(url, 7, 'suspension'), BY)).toEqual({ value: 1, meaning: 'suspended' });
    expect(await c.w3c(entry(url, 6, 'suspension'), BY)).toEqual({ value: 0, meaning: 'valid' });
  });

  test('multi-bit message lists read each entry most significant bit first', async () => {
    const statusMessage = [0, 1, 2, 3].map((v) => ({ status: `0x${v}`, message: `m${v}` }));
    const url = await serveW3c('message', { purpose: 'message', statusSize: 2, statusMessage, entries: [[1, 2], [2, 1], [3, 3]] });
    const c = checker();
    const read = async (i: number) => (await c.w3c(entry(url, i, 'message', 2, statusMessage), BY)).value;
    expect([await read(0), await read(1), await read(2), await read(3)]).toEqual([0, 2, 1, 3]);
    expect((await c.w3c(entry(url, 1, 'message', 2, statusMessage), BY)).meaning).toBe('other');
  });

  test('a hand-built bitstring: the left-most bit of byte 0 is index 0', async () => {
    const path = freshPath('hand-built');
    const url = `${server.origin}${path}`;
    const bits = Buffer.alloc(16 * 1024);
    bits[0] = 0b0100_0000; // index 1
    bits[1] = 0b0000_0001; // index 15
    const iat = Math.floor(nowMs / 1000);
    const token = await new SignJWT({
      vc: {
        '@context': ['https://www.w3.org/2018/credentials/v1'],
        id: url,
        type: ['VerifiableCredential', 'BitstringStatusListCredential'],
        issuer: issuer.did,
        credentialSubject: { id: `${url}#list`, type: 'BitstringStatusList', statusPurpose: 'revocation', encodedList: `u${gzipSync(bits).toString('base64url')}` },
      },
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: `${issuer.did}#0` })
      .setIssuer(issuer.did)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(issuer.privateKey);
    server.serve(path, { body: token });
    const c = checker();
    const set: number[] = [];
    for (let i = 0; i < 24; i++) if ((await c.w3c(entry(url, i), BY)).value) set.push(i);
    expect(set).toEqual([1, 15]);
  });

  test("the entry's purpose must be the list's", async () => {
    const url = await serveW3c('purpose', { purpose: 'revocation', entries: [[2, 1]] });
    expect((await refusal(checker().w3c(entry(url, 2, 'suspension'), BY))).detail).toMatch(/for revocation, not suspension/);
  });

  test('bad signature, expired list, another id and an index past the end are status_unavailable', async () => {
    const forged = await serveW3c('forged', { signer: ed25519Issuer().signer(`${issuer.did}#0`), entries: [[1, 1]] });
    expect((await refusal(checker().w3c(entry(forged, 1), BY))).detail).toMatch(/signature/);
    const expired = await serveW3c('expired', { issuedAt: new Date(nowMs - 2 * DAY), expiresAt: new Date(nowMs - DAY) });
    expect((await refusal(checker().w3c(entry(expired, 1), BY))).detail).toMatch(/expired/);
    const moved = await serveW3c('moved', { url: `${server.origin}/lists/elsewhere` });
    expect((await refusal(checker().w3c(entry(moved, 1), BY))).detail).toMatch(/has id/);
    const short = await serveW3c('end', {});
    expect((await refusal(checker().w3c(entry(short, 131_072), BY))).detail).toMatch(/outside/);
  });

  test('a malformed entry is status_unavailable without a fetch', async () => {
    const url = await serveW3c('malformed');
    await refusal(checker().w3c({ type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '-1', statusListCredential: url }, BY));
    await refusal(checker().w3c({ type: 'StatusList2021Entry', statusPurpose: 'revocation', statusListIndex: '1', statusListCredential: url }, BY));
    expect(hits(url)).toBe(0);
  });
});

describe('caching and shared fetches', () => {
  test('a second check of the same list makes no request, until the list ttl has passed', async () => {
    const uri = await serveIetf('cached', { entries: [[1, 1]], ttlSeconds: 60 });
    const c = checker();
    expect((await c.ietf({ uri, idx: 1 }, BY)).meaning).toBe('revoked');
    expect((await c.ietf({ uri, idx: 0 }, BY)).meaning).toBe('valid');
    expect(hits(uri)).toBe(1);
    nowMs += 61_000;
    await c.ietf({ uri, idx: 1 }, BY);
    expect(hits(uri)).toBe(2);
  });

  test('our own ttlSeconds bounds a longer list ttl; Cache-Control max-age shortens it; no-store keeps nothing', async () => {
    const long = await serveIetf('long-ttl', { ttlSeconds: 3600 });
    const c = checker({ ttlSeconds: 10 });
    await c.ietf({ uri: long, idx: 0 }, BY);
    nowMs += 9_000;
    await c.ietf({ uri: long, idx: 0 }, BY);
    expect(hits(long)).toBe(1);
    nowMs += 2_000;
    await c.ietf({ uri: long, idx: 0 }, BY);
    expect(hits(long)).toBe(2);

    const maxAge = await serveW3c('max-age', { ttlSeconds: 3600, headers: { 'cache-control': 'max-age=5' } });
    const w = checker();
    await w.w3c(w3cStatusEntry({ url: maxAge, index: 0, purpose: 'revocation', statusSize: 1 }), BY);
    nowMs += 6_000;
    await w.w3c(w3cStatusEntry({ url: maxAge, index: 0, purpose: 'revocation', statusSize: 1 }), BY);
    expect(hits(maxAge)).toBe(2);

    const noStore = await serveIetf('no-store', { headers: { 'cache-control': 'no-store' } });
    await c.ietf({ uri: noStore, idx: 0 }, BY);
    await c.ietf({ uri: noStore, idx: 0 }, BY);
    expect(hits(noStore)).toBe(2);
  });

  test('a list is not kept past its exp', async () => {
    const uri = await serveIetf('short-exp', { ttlSeconds: 3600, expiresAt: new Date(nowMs + 5_000) });
    const c = checker();
    await c.ietf({ uri, idx: 0 }, BY);
    nowMs += 6_000;
    expect((await refusal(c.ietf({ uri, idx: 0 }, BY))).detail).toMatch(/expired/);
    expect(hits(uri)).toBe(2);
  });

  test('concurrent checks of one list share one in-flight fetch', async () => {
    const uri = await serveIetf('in-flight', { entries: [[2, 1]] });
    const path = new URL(uri).pathname;
    const route = { body: (await (await fetch(uri)).text()), delayMs: 150 };
    server.serve(path, route);
    const before = hits(uri);
    const c = checker();
    const results = await Promise.all([0, 1, 2, 3, 2].map((idx) => c.ietf({ uri, idx }, BY)));
    expect(results.map((r) => r.value)).toEqual([0, 0, 1, 0, 1]);
    expect(hits(uri) - before).toBe(1);
  });

  test('a failed fetch is not cached: the next check tries again', async () => {
    const path = freshPath('flaky');
    const uri = `${server.origin}${path}`;
    const c = checker();
    await refusal(c.ietf({ uri, idx: 0 }, BY));
    const token = await signIetfStatusListToken(input(path, {}), issuer.signer());
    server.serve(path, { body: token });
    expect((await c.ietf({ uri, idx: 0 }, BY)).meaning).toBe('valid');
  });
});

describe('the list must be signed by the credential’s issuer', () => {
  test('an IETF or W3C list signed (validly) by another issuer → status_signer_mismatch, naming both', async () => {
    const stranger = ed25519Issuer();
    const c = checker();
    const ietf = await serveIetf('stranger-ietf', { issuerDid: stranger.did, signer: stranger.signer() });
    const w3c = await serveW3c('stranger-w3c', { issuerDid: stranger.did, signer: stranger.signer() });
    // One at a time: a second check started beside the first could reject before anything awaits it.
    for (const check of [() => c.ietf({ uri: ietf, idx: 0 }, BY), () => c.w3c(w3cStatusEntry({ url: w3c, index: 0, purpose: 'revocation', statusSize: 1 }), BY)]) {
      const err = await check().then(
        () => null,
        (e: unknown) => e as PresentationInvalidError,
      );
      expect(err).toBeInstanceOf(PresentationInvalidError);
      expect(err).toMatchObject({ reason: 'status_signer_mismatch', detail: expect.stringContaining(stranger.did) });
      expect(err!.detail).toContain(issuer.did);
    }
    // The same lists are good evidence about the stranger's own credentials.
    expect(await c.ietf({ uri: ietf, idx: 0 }, { issuer: stranger.did })).toEqual({ value: 0, meaning: 'valid' });
    expect(await c.w3c(w3cStatusEntry({ url: w3c, index: 0, purpose: 'revocation', statusSize: 1 }), { issuer: stranger.did })).toEqual({ value: 0, meaning: 'valid' });
  });

  test("a list without iss is the DID its kid names: another DID's key → status_signer_mismatch", async () => {
    const stranger = ed25519Issuer();
    const path = freshPath('no-iss');
    const token = await new SignJWT({ sub: `${server.origin}${path}`, iat: Math.floor(nowMs / 1000), exp: Math.floor(nowMs / 1000) + 3600, status_list: { bits: 1, lst: deflateSync(Buffer.alloc(16)).toString('base64url') } })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'statuslist+jwt', kid: `${stranger.did}#0` })
      .sign(stranger.privateKey);
    server.serve(path, { body: token });
    const err = await checker()
      .ietf({ uri: `${server.origin}${path}`, idx: 0 }, BY)
      .then(
        () => null,
        (e: unknown) => e as PresentationInvalidError,
      );
    expect(err).toMatchObject({ reason: 'status_signer_mismatch' });
  });
});

describe('the verification deadline', () => {
  test('an aborted lookup ends at once with the deadline’s own reason, and the list fetch is cancelled', async () => {
    const path = freshPath('slow');
    server.serve(path, { body: await signIetfStatusListToken(input(path, {}), issuer.signer()), delayMs: 3000 });
    const controller = new AbortController();
    const timeout = new PresentationInvalidError('verification_timeout', 'deadline');
    const outcome = expect(checker().ietf({ uri: `${server.origin}${path}`, idx: 0 }, { ...BY, signal: controller.signal })).rejects.toBe(timeout);
    // Aborted once the list fetch is in flight (the server has it), however slow the machine.
    await eventually(async () => server.hits(path) > 0 || undefined, 5000, 'the list fetch to arrive');
    const aborted = performance.now();
    controller.abort(timeout);
    await outcome;
    expect(performance.now() - aborted).toBeLessThan(1000);
    await eventually(async () => server.abandoned.includes(path) || undefined, 2000, 'the connection to close');
  });
});

describe('fetch limits and the SSRF guard', () => {
  test('a list server that never answers times out as status_unavailable', async () => {
    const path = freshPath('hang');
    server.serve(path, { hang: true });
    const started = Date.now();
    const fetch = guardedFetcher({ allowLoopback: true, allowHttp: true, timeoutMs: 300, maxBytes: 1024 * 1024 });
    expect((await refusal(checker({ fetch }).ietf({ uri: `${server.origin}${path}`, idx: 0 }, BY))).detail).toMatch(/timeout/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('a body over the limit is status_unavailable, with or without a content-length', async () => {
    const uri = await serveIetf('large', { listSize: 100_000 });
    expect((await refusal(checker({ maxListBytes: 100 }).ietf({ uri, idx: 0 }, BY))).detail).toMatch(/too_large/);
    const path = new URL(uri).pathname;
    server.serve(path, { body: await (await fetch(uri)).text(), chunked: true });
    expect((await refusal(checker({ maxListBytes: 100 }).ietf({ uri, idx: 0 }, BY))).detail).toMatch(/too_large/);
    expect((await checker().ietf({ uri, idx: 0 }, BY)).meaning).toBe('valid');
  });

  test.each(['10.0.0.5', '169.254.169.254', '127.0.0.1'])('a list host resolving to %s is refused before any connection (deployed policy)', async (address) => {
    const resolved: string[] = [];
    const request = loopbackOnlyRequest();
    const fetch = guardedFetcher({
      allowLoopback: false,
      timeoutMs: 1000,
      maxBytes: 1024 * 1024,
      resolver: async (host) => {
        resolved.push(host);
        return [{ address, family: 4 }];
      },
      request,
    });
    const c = checker({ fetch });
    expect((await refusal(c.ietf({ uri: 'https://lists.example.test/1', idx: 0 }, BY))).detail).toMatch(/refused_address/);
    expect((await refusal(c.w3c(w3cStatusEntry({ url: 'https://lists.example.test/2', index: 0, purpose: 'revocation', statusSize: 1 }), BY))).detail).toMatch(/refused_address/);
    expect(resolved).toEqual(['lists.example.test', 'lists.example.test']);
    expect(request.dialled).toEqual([]);
  });

  test('plain http is refused unless the local runtime allows it', async () => {
    const uri = await serveIetf('http-refused');
    const fetch = guardedFetcher({ allowLoopback: true, timeoutMs: 1000, maxBytes: 1024 * 1024 });
    expect((await refusal(checker({ fetch }).ietf({ uri, idx: 0 }, BY))).detail).toMatch(/must use https/);
    expect(hits(uri)).toBe(0);
  });
});
