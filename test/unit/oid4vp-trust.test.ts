import { tenantScope } from '../../lib/store/keys';
import { issuerPins } from '../../lib/oid4vp/query/pins';
import type { RequestQuery } from '../../lib/oid4vp/records';
import { loadTrustedIssuers, saveTrustedIssuers } from '../../lib/oid4vp/trusted-issuers';
import { FetchCache } from '../../lib/oid4vp/verification/fetch-cache';
import { MAX_TRUSTED_ISSUERS, trustedIssuerProblem, trustOf, trustPolicy } from '../../lib/oid4vp/verification/trust';
import { MemoryStore } from '../helpers/memory-store';

const scope = tenantScope('7');
const local = { allowLoopbackHttp: true };
const deployed = { allowLoopbackHttp: false };
const NOTDID = 'is not a DID (did:<method>:<id>, without path, query or fragment)';

describe('the trusted-issuers setting: what an entry may be', () => {
  it.each([
    ['did:web:issuer.example', null],
    ['did:web:issuer.example%3A8443:tenants:a', null],
    ['did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', null],
    ['https://issuer.example', null],
    ['https://issuer.example/tenants/a', null],
    ['did:web:issuer.example#key-1', 'is not a DID'],
    ['did:web:issuer.example/path', 'is not a DID'],
    ['did:web:issuer.example:', 'is not a DID'],
    ['DID:web:x', 'must be a DID or an https issuer URL'],
    ['issuer.example', 'must be a DID or an https issuer URL'],
    ['http://issuer.example', 'must use https'],
    ['https://user:pw@issuer.example', 'must not carry credentials'],
    ['https://issuer.example?x=1', 'must not have a query'],
    ['https://issuer.example#a', 'must not have a fragment'],
    ['https://issuer.example/a b', 'must not contain whitespace'],
    ['', 'must not be empty'],
    [`did:web:${'a'.repeat(1000)}`, 'longer than 1000 characters'],
  ])('%s', (value, problem) => {
    const got = trustedIssuerProblem(value, deployed);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toContain(problem);
  });

  it('plain http only to loopback hosts, and only where the runtime allows it (the local runtime)', () => {
    expect(trustedIssuerProblem('http://127.0.0.1:8080/issuer', local)).toBeNull();
    expect(trustedIssuerProblem('http://localhost:8080', local)).toBeNull();
    expect(trustedIssuerProblem('http://127.0.0.1:8080/issuer', deployed)).toBe('must use https');
    expect(trustedIssuerProblem('http://issuer.example', local)).toContain('http only for loopback hosts');
  });

  it.each([
    // A DID is the whole value: no path after it, no DID inside something else, complete percent-escapes.
    ['did:web:a.example/b', NOTDID],
    ['did:web:a/did:web:b', NOTDID],
    ['did:web:a%2', NOTDID],
    ['did:web:a%2G', NOTDID],
    ['did:web:a%GG', NOTDID],
    // A DID may end in a percent-escape.
    ['did:example:a%20', null],
    // Credentials, a query or a fragment are refused even when empty or alone.
    ['https://user@issuer.example', 'must not carry credentials'],
    ['https://:pw@issuer.example', 'must not carry credentials'],
    ['https://issuer.example/?', 'must not have a query'],
    ['https://issuer.example/#', 'must not have a fragment'],
    ['http://issuer.example/x', 'must use https'],
    [`did:web:${'a'.repeat(1000 - 'did:web:'.length)}`, null],
  ])('exactly: %s', (value, problem) => {
    expect(trustedIssuerProblem(value, deployed)).toBe(problem);
  });

  it('loopback for plain http is 127.0.0.0/8, localhost and ::1, each as the whole host', () => {
    for (const ok of ['http://localhost', 'http://LOCALHOST:8080', 'http://[::1]:8080', 'http://127.0.0.1', 'http://127.10.20.30:9000']) expect([ok, trustedIssuerProblem(ok, local)]).toEqual([ok, null]);
    for (const no of ['http://127.0.0.1.example', 'http://localhost.example', 'http://[::2]', 'http://10.0.0.1', 'http://127.0.0.1.example:8080'])
      expect([no, trustedIssuerProblem(no, local)]).toEqual([no, 'must use https (http only for loopback hosts)']);
  });

  it('"*" is the opt-out only as the single entry', () => {
    expect(trustPolicy(['*'], async () => false).anyIssuer).toBe(true);
    expect(trustPolicy(['*', 'did:web:a.example'], async () => false).anyIssuer).toBe(false);
    expect(trustPolicy(['did:web:a.example', '*'], async () => false).anyIssuer).toBe(false);
  });

  it('PUT replaces the list; bad entries, duplicates, "*" with others and too many are a 400 naming each path, and change nothing', async () => {
    const store = new MemoryStore();
    const at = new Date();
    expect(await loadTrustedIssuers(store, scope)).toEqual([]);
    expect(await saveTrustedIssuers(store, scope, ['did:web:a.example', 'https://b.example'], { ...deployed, at })).toEqual(['did:web:a.example', 'https://b.example']);

    const refusal = async (issuers: string[]) => {
      const err = await saveTrustedIssuers(store, scope, issuers, { ...deployed, at }).then(
        () => null,
        (e: unknown) => e as { status: number; code: string; details: { path: string; message: string }[] },
      );
      expect(err).toMatchObject({ status: 400, code: 'invalid_trusted_issuers' });
      return err!.details;
    };
    expect(await refusal(['did:web:a.example', 'ftp://x', 'did:web:a.example'])).toEqual([
      { path: 'issuers.1', message: expect.stringContaining('https') },
      { path: 'issuers.2', message: 'the same issuer as issuers.0' },
    ]);
    // did:web compares percent-decoded: the same DID spelled twice.
    expect(await refusal(['did:web:a.example%3A8443', 'did:web:a.example%3a8443'])).toEqual([{ path: 'issuers.1', message: 'the same issuer as issuers.0' }]);
    expect(await refusal(['*', 'did:web:a.example'])).toEqual([{ path: 'issuers.0', message: expect.stringContaining('only entry') }]);
    expect(await refusal(Array.from({ length: MAX_TRUSTED_ISSUERS + 1 }, (_, i) => `did:web:i${i}.example`))).toEqual([{ path: 'issuers', message: `at most ${MAX_TRUSTED_ISSUERS} issuers` }]);
    expect(await loadTrustedIssuers(store, scope)).toEqual(['did:web:a.example', 'https://b.example']);

    expect(await saveTrustedIssuers(store, scope, ['*'], { ...deployed, at })).toEqual(['*']);
    expect(await saveTrustedIssuers(store, scope, [], { ...deployed, at })).toEqual([]);
    expect(await loadTrustedIssuers(store, scope)).toEqual([]);
  });
});

describe('trustOf: pinned, listed, own DID, "*" — the first that holds', () => {
  const own = new Set(['did:key:zOwn']);
  const lookups: string[] = [];
  const isOwn = async (did: string) => (lookups.push(did), own.has(did));
  beforeEach(() => (lookups.length = 0));

  it('decides in order and reads the store only for the own-DID check', async () => {
    const listed = trustPolicy(['did:web:listed.example', 'https://listed.example'], isOwn);
    expect(await trustOf('did:web:listed.example', new Set(['did:web:listed.example']), listed)).toBe('pinned_by_request');
    expect(await trustOf('did:web:listed.example', undefined, listed)).toBe('trusted_issuers_setting');
    expect(await trustOf('https://listed.example', undefined, listed)).toBe('trusted_issuers_setting');
    expect(lookups).toEqual([]);
    expect(await trustOf('did:key:zOwn', undefined, listed)).toBe('own_did');
    expect(await trustOf('did:jwk:anyone', undefined, listed)).toBeNull();
    // A URL issuer is never one of the wallet's DIDs: no read.
    expect(await trustOf('https://other.example', undefined, listed)).toBeNull();
    expect(lookups).toEqual(['did:key:zOwn', 'did:jwk:anyone']);
  });

  it('a pin naming another issuer trusts no one; URLs compare exactly, did:web percent-decoded', async () => {
    const none = trustPolicy([], isOwn);
    expect(await trustOf('did:jwk:anyone', new Set(['did:web:someone.example']), none)).toBeNull();
    expect(await trustOf('https://listed.example/', undefined, trustPolicy(['https://listed.example'], isOwn))).toBeNull();
    expect(await trustOf('did:web:a.example%3A8443', undefined, trustPolicy(['did:web:a.example%3a8443'], isOwn))).toBe('trusted_issuers_setting');
  });

  it('"*" accepts any issuer, after the own-DID check (which says more)', async () => {
    const any = trustPolicy(['*'], isOwn);
    expect(any.listed.size).toBe(0);
    expect(await trustOf('did:jwk:anyone', undefined, any)).toBe('any_issuer');
    expect(await trustOf('did:key:zOwn', undefined, any)).toBe('own_did');
  });
});

describe('issuerPins: only what every answer must meet pins an issuer', () => {
  const def = (fields: unknown[]): RequestQuery => ({ kind: 'pe', definition: { id: 'd', input_descriptors: [{ id: 'pid', constraints: { fields } }] }, dcql: {} });
  const dcql = (credential: Record<string, unknown>): RequestQuery => ({ kind: 'dcql', dcql: { credentials: [{ id: 'pid', format: 'dc+sd-jwt', ...credential }] } });
  const pins = (q: RequestQuery) => Object.fromEntries([...issuerPins(q)].map(([id, set]) => [id, [...set].sort()]));

  it('a definition: a required `$.iss` field with const or enum (several fields intersect)', () => {
    expect(pins(def([{ path: ['$.iss'], filter: { type: 'string', const: 'did:web:a.example' } }]))).toEqual({ pid: ['did:web:a.example'] });
    expect(pins(def([{ path: ["$['iss']"], filter: { enum: ['did:web:a.example', 'did:web:b.example', 7] } }]))).toEqual({ pid: ['did:web:a.example', 'did:web:b.example'] });
    expect(pins(def([{ path: ['$.iss'], filter: { enum: ['did:web:a.example', 'did:web:b.example'] } }, { path: ['$.iss'], filter: { const: 'did:web:b.example' } }]))).toEqual({ pid: ['did:web:b.example'] });
  });

  it('a definition: optional fields, other paths as alternatives, and filters without values pin nothing', () => {
    expect(pins(def([{ path: ['$.iss'], optional: true, filter: { const: 'did:web:a.example' } }]))).toEqual({});
    expect(pins(def([{ path: ['$.issuer_name', '$.iss'], filter: { const: 'did:web:a.example' } }]))).toEqual({});
    expect(pins(def([{ path: ['$.iss'], filter: { type: 'string', pattern: '^did:web:' } }]))).toEqual({});
    expect(pins(def([{ path: ['$.vc.iss'], filter: { const: 'did:web:a.example' } }]))).toEqual({});
  });

  it('DCQL: a claim ["iss"] with values, in every claim set', () => {
    expect(pins(dcql({ claims: [{ path: ['iss'], values: ['did:web:a.example'] }, { path: ['given_name'] }] }))).toEqual({ pid: ['did:web:a.example'] });
    const claims = [
      { id: 'i', path: ['iss'], values: ['did:web:a.example'] },
      { id: 'g', path: ['given_name'] },
    ];
    expect(pins(dcql({ claims, claim_sets: [['i', 'g'], ['i']] }))).toEqual({ pid: ['did:web:a.example'] });
    expect(pins(dcql({ claims, claim_sets: [['i', 'g'], ['g']] }))).toEqual({});
    expect(pins(dcql({ claims: [{ path: ['iss'] }] }))).toEqual({});
    expect(pins(dcql({ claims: [{ path: ['issuer', 'iss'], values: ['x'] }] }))).toEqual({});
  });
});

describe('FetchCache: one shared load, cancelled only when no caller waits', () => {
  /** A load that settles when told, recording whether it was aborted. */
  function controllable() {
    let settle!: (v: string) => void;
    const seen: { signal?: AbortSignal; calls: number } = { calls: 0 };
    const load = (signal: AbortSignal) => {
      seen.calls++;
      seen.signal = signal;
      return new Promise<{ value: string; ttlMs: number }>((resolve, reject) => {
        settle = (value) => resolve({ value, ttlMs: 60_000 });
        signal.addEventListener('abort', () => reject(new Error('aborted')));
      });
    };
    return { load, seen, settle: (v: string) => settle(v) };
  }

  it("one caller's deadline ends its own wait; the load goes on for the other", async () => {
    const cache = new FetchCache({ maxEntries: 10 });
    const c = controllable();
    const a = new AbortController();
    const b = new AbortController();
    const first = cache.get('k', c.load, a.signal);
    const second = cache.get('k', c.load, b.signal);
    a.abort(new Error('deadline of a'));
    await expect(first).rejects.toThrow('deadline of a');
    expect(c.seen.signal!.aborted).toBe(false);
    c.settle('doc');
    await expect(second).resolves.toBe('doc');
    expect(c.seen.calls).toBe(1);
    await expect(cache.get('k', c.load)).resolves.toBe('doc');
  });

  it('when every caller has given up, the load is aborted and the next caller starts afresh', async () => {
    const cache = new FetchCache({ maxEntries: 10 });
    const c = controllable();
    const a = new AbortController();
    const first = cache.get('k', c.load, a.signal);
    a.abort(new Error('deadline'));
    await expect(first).rejects.toThrow('deadline');
    expect(c.seen.signal!.aborted).toBe(true);
    const again = cache.get('k', c.load);
    expect(c.seen.calls).toBe(2);
    c.settle('fresh');
    await expect(again).resolves.toBe('fresh');
  });

  it('a caller without a signal keeps the load alive; an already-aborted caller starts nothing', async () => {
    const cache = new FetchCache({ maxEntries: 10 });
    const c = controllable();
    const a = new AbortController();
    const kept = cache.get('k', c.load);
    const leaving = cache.get('k', c.load, a.signal);
    a.abort(new Error('gone'));
    await expect(leaving).rejects.toThrow('gone');
    expect(c.seen.signal!.aborted).toBe(false);
    c.settle('doc');
    await expect(kept).resolves.toBe('doc');

    const d = controllable();
    await expect(cache.get('other', d.load, a.signal)).rejects.toThrow('gone');
    expect(d.seen.calls).toBe(0);
  });
});
