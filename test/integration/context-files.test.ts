import { CONTEXT_FILE_LIMITS } from '../../lib/jsonld/context-files';
import { expectError, observedTestApi, ok, type TestApi } from '../helpers/runtime';

/**
 * Context files (contract 4.7, docs/jsonld.md) through the local runtime: stored by a wallet, served
 * publicly under its public reference, immutable, and never another wallet's.
 */
const observed = observedTestApi();
let api: TestApi;
let a: Awaited<ReturnType<TestApi['newWallet']>>;
let b: Awaited<ReturnType<TestApi['newWallet']>>;

const EMPLOYEE = {
  '@context': {
    '@version': 1.1,
    '@protected': true,
    Employee: 'https://example.com/vocab#Employee',
    employeeNumber: 'https://example.com/vocab#employeeNumber',
  },
};

beforeAll(async () => {
  api = observed.api();
  [a, b] = [await api.newWallet(), await api.newWallet()];
});

const store = (key: string, body: unknown) => api.call('POST', '/api/v1/context', { key, body });

test('stored once, served publicly as application/ld+json with cache headers and an ETag, listed under its reference', async () => {
  const stored = await ok(store(a.apiKey, { context_file_id: 'employee-v1.jsonld', file: EMPLOYEE }), 'store');
  const id = `${a.publicRef}:employee-v1.jsonld`;
  expect(stored).toEqual({ message: expect.stringContaining('stored'), id, context_file_id: 'employee-v1.jsonld', url: `${api.rt.url}/context/${id}` });

  const res = await fetch(stored.url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/ld+json');
  expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  const etag = res.headers.get('etag')!;
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  expect(await res.json()).toEqual(EMPLOYEE);
  const again = await fetch(stored.url, { headers: { 'if-none-match': etag } });
  expect(again.status).toBe(304);
  expect(await again.text()).toBe('');

  // The contract's list path, with and without its trailing slash; only the named wallet's files.
  await ok(store(b.apiKey, { context_file_id: 'other.jsonld', file: EMPLOYEE }), 'store b');
  for (const path of [`/context/?public_ref=${a.publicRef}`, `/context?public_ref=${a.publicRef}`]) {
    const list = await api.call('GET', path);
    expect(list.status).toBe(200);
    expect(list.headers.get('cache-control')).toBe('public, max-age=60');
    expect(list.body).toEqual([{ id, context_file_id: 'employee-v1.jsonld', url: stored.url, created_at: expect.any(String) }]);
  }
  // The list never spans wallets: the contract's list, without a reference, names no wallet's files.
  const unnamed = await api.call('GET', '/context/');
  expect(unnamed.status).toBe(200);
  expect(unnamed.body).toEqual([]);
});

test('immutable: the same content again is the same answer, other content under the id is a 409 and changes nothing', async () => {
  await ok(store(a.apiKey, { context_file_id: 'fixed.jsonld', file: EMPLOYEE }), 'store');
  // Key order is not content.
  const reordered = { '@context': { employeeNumber: EMPLOYEE['@context'].employeeNumber, Employee: EMPLOYEE['@context'].Employee, '@protected': true, '@version': 1.1 } };
  const same = await store(a.apiKey, { context_file_id: 'fixed.jsonld', file: reordered });
  expect(same.status).toBe(200);
  expect(same.body.message).toContain('already stored with the same content');
  const changed = { '@context': { ...EMPLOYEE['@context'], employeeNumber: 'https://evil.example/number' } };
  expectError(await store(a.apiKey, { context_file_id: 'fixed.jsonld', file: changed }), 409, 'context_file_exists');
  const served = await api.call('GET', `/context/${a.publicRef}:fixed.jsonld`);
  expect(served.body).toEqual(EMPLOYEE);
});

test('two wallets use the same file name without meeting; neither reads or overwrites the other', async () => {
  const mine = { '@context': { name: 'https://a.example/name' } };
  const theirs = { '@context': { name: 'https://b.example/name' } };
  await ok(store(a.apiKey, { context_file_id: 'shared-name.jsonld', file: mine }), 'a');
  await ok(store(b.apiKey, { context_file_id: 'shared-name.jsonld', file: theirs }), 'b');
  expect((await api.call('GET', `/context/${a.publicRef}:shared-name.jsonld`)).body).toEqual(mine);
  expect((await api.call('GET', `/context/${b.publicRef}:shared-name.jsonld`)).body).toEqual(theirs);
  // A's file asked for under B's reference is read in B's session only, and is B's (or nothing).
  observed.decisions.length = 0;
  expectError(await api.call('GET', `/context/${b.publicRef}:employee-v1.jsonld`), 404, 'context_file_not_found');
  const sessions = observed.decisions.filter((d) => d.principal.fn === 'jsonld-public' && d.principal.wallet !== null);
  expect(sessions.length).toBeGreaterThan(0);
  expect(sessions.every((d) => d.principal.wallet === String(b.walletId) && d.allowed)).toBe(true);
  // The wallet's sequential id, an unknown reference and a malformed id: the same 404.
  const refused = await Promise.all([`${a.walletId}:employee-v1.jsonld`, 'AAAAAAAAAAAAAAAAAAAAAA:employee-v1.jsonld', 'no-separator', `${a.publicRef}:..`].map((id) => api.call('GET', `/context/${encodeURIComponent(id)}`)));
  for (const r of refused) expectError(r, 404, 'context_file_not_found');
  expect(new Set(refused.map((r) => JSON.stringify(r.body))).size).toBe(1);
});

test('a context may import a bundled context and the wallet\'s own files, not another wallet\'s, and nothing from the network', async () => {
  const own = `${api.rt.url}/context/${a.publicRef}:employee-v1.jsonld`;
  await ok(store(a.apiKey, { context_file_id: 'imports.jsonld', file: { '@context': ['https://www.w3.org/2018/credentials/v1', own, { badge: 'https://example.com/vocab#badge' }] } }), 'imports');
  // B's file, under a name A has too: resolved neither as B's (another wallet's partition) nor as A's own (another reference).
  await ok(store(a.apiKey, { context_file_id: 'mirror.jsonld', file: { '@context': { mirror: 'https://a.example/mirror' } } }), 'a mirror');
  await ok(store(b.apiKey, { context_file_id: 'mirror.jsonld', file: { '@context': { mirror: 'https://b.example/mirror' } } }), 'b mirror');
  const foreign = `${api.rt.url}/context/${b.publicRef}:mirror.jsonld`;
  const refused = await store(a.apiKey, { context_file_id: 'foreign.jsonld', file: { '@context': [foreign] } });
  expectError(refused, 400, 'unknown_context');
  expect(refused.body.error).toContain(foreign);
  const remote = await store(a.apiKey, { context_file_id: 'remote.jsonld', file: { '@context': ['https://schema.org/'] } });
  expectError(remote, 400, 'unknown_context');
  expect(remote.body.error).toContain('https://schema.org/');
});

test('bad input is a 4xx with {error, code} and stores nothing', async () => {
  const cases: [unknown, number, string][] = [
    [{ context_file_id: '../etc/passwd', file: EMPLOYEE }, 400, 'validation_failed'],
    [{ context_file_id: '.hidden', file: EMPLOYEE }, 400, 'validation_failed'],
    [{ context_file_id: 'a/b.jsonld', file: EMPLOYEE }, 400, 'validation_failed'],
    [{ context_file_id: 'x'.repeat(129), file: EMPLOYEE }, 400, 'validation_failed'],
    [{ context_file_id: 'no-context.jsonld', file: { name: 'x' } }, 400, 'validation_failed'],
    [{ context_file_id: 'not-object.jsonld', file: ['@context'] }, 400, 'validation_failed'],
    [{ context_file_id: 'bad-term.jsonld', file: { '@context': { name: 5 } } }, 400, 'invalid_jsonld'],
    [{ context_file_id: 'protected.jsonld', file: { '@context': ['https://www.w3.org/2018/credentials/v1', { VerifiableCredential: 'https://evil.example/VC' }] } }, 400, 'invalid_jsonld'],
    [{ context_file_id: 'missing.jsonld' }, 400, 'validation_failed'],
  ];
  for (const [body, status, code] of cases) {
    const res = await store(a.apiKey, body);
    expectError(res, status, code);
    const name = (body as { context_file_id: string }).context_file_id;
    if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) expect((await api.call('GET', `/context/${a.publicRef}:${name}`)).status).toBe(404);
  }
  // Over the size bound (as compact JSON), within the route's body limit.
  const big = { '@context': Object.fromEntries(Array.from({ length: 1100 }, (_, i) => [`term${i}`, `https://example.com/vocab#a-rather-long-term-name-${i}`])) };
  expect(JSON.stringify(big).length).toBeGreaterThan(CONTEXT_FILE_LIMITS.maxBytes);
  expect(JSON.stringify({ context_file_id: "big.jsonld", file: big }).length).toBeLessThan(128 * 1024);
  expectError(await store(a.apiKey, { context_file_id: 'big.jsonld', file: big }), 413, 'context_file_too_large');
  expect((await api.call('GET', `/context/${a.publicRef}:big.jsonld`)).status).toBe(404);
  // Malformed JSON and no key.
  expectError(await api.call('POST', '/api/v1/context', { key: a.apiKey, rawBody: '{"context_file_id":' }), 400, 'malformed_json');
  expect((await api.call('POST', '/api/v1/context', { body: { context_file_id: 'x.jsonld', file: EMPLOYEE } })).status).toBe(401);
  expectError(await api.call('GET', `/context/?public_ref=AAAAAAAAAAAAAAAAAAAAAA`), 404, 'wallet_not_found');
});
