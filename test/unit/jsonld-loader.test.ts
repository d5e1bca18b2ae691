import { CONTEXT_FILE_ID, parsePublicContextId, publicContextId, sortedJson } from '../../lib/jsonld/context-files';
import { BUNDLED_CONTEXTS, CONTEXT_URLS } from '../../lib/jsonld/contexts';
import { assertSafe, MAX_TENANT_LOOKUPS, offlineDocumentLoader, UndefinedTermError, UnknownContextError } from '../../lib/jsonld/loader';

const REF = 'Aa0_Bb1-Cc2Dd3Ee4Ff5Gg';
const credential = (extra: Record<string, unknown> = {}, context: unknown[] = [CONTEXT_URLS.credentialsV1]) => ({
  '@context': context,
  type: ['VerifiableCredential'],
  issuer: 'did:example:issuer',
  issuanceDate: '2026-01-01T00:00:00Z',
  credentialSubject: { id: 'did:example:ada', ...extra },
});

test('every context the suites and status lists need is bundled', () => {
  for (const url of Object.values(CONTEXT_URLS)) expect(BUNDLED_CONTEXTS.get(url)).toEqual(expect.objectContaining({ '@context': expect.anything() }));
  expect(BUNDLED_CONTEXTS.has('https://w3id.org/security/v2')).toBe(true);
});

test('the loader answers bundled contexts, asks the port for the rest, and refuses what neither holds', async () => {
  const asked: string[] = [];
  const loader = offlineDocumentLoader({ contexts: async (url) => (asked.push(url), url === 'https://x.example/own' ? { '@context': {} } : undefined) });
  expect((await loader(CONTEXT_URLS.credentialsV2)).document).toBe(BUNDLED_CONTEXTS.get(CONTEXT_URLS.credentialsV2));
  expect((await loader('https://x.example/own')).document).toEqual({ '@context': {} });
  await expect(loader('https://x.example/other')).rejects.toThrow(UnknownContextError);
  expect(asked).toEqual(['https://x.example/own', 'https://x.example/other']);
  // Without a port: bundled only.
  await expect(offlineDocumentLoader()('https://x.example/own')).rejects.toThrow(/never fetched from the network/);
});

test('one loader asks the port for at most MAX_TENANT_LOOKUPS distinct URLs (repeats are remembered)', async () => {
  let calls = 0;
  const loader = offlineDocumentLoader({ contexts: async () => (calls++, { '@context': {} }) });
  for (let i = 0; i < MAX_TENANT_LOOKUPS; i++) await loader(`https://x.example/${i}`);
  await loader('https://x.example/0');
  expect(calls).toBe(MAX_TENANT_LOOKUPS);
  await expect(loader('https://x.example/one-more')).rejects.toMatchObject({ status: 400, code: 'too_many_contexts' });
});

test('safe mode: an undefined term is named; a relative id is refused; a defined vocabulary passes', async () => {
  const loader = offlineDocumentLoader();
  await expect(assertSafe(credential({ nickname: 'Ada' }), loader)).rejects.toThrow(UndefinedTermError);
  await expect(assertSafe(credential({ nickname: 'Ada' }), loader)).rejects.toThrow('"nickname"');
  await expect(assertSafe({ ...credential(), credentialSubject: { id: 'ada' } }, loader)).rejects.toMatchObject({ status: 400, code: 'jsonld_safe_mode' });
  await expect(assertSafe(credential({ nickname: 'Ada' }, [CONTEXT_URLS.credentialsV1, { nickname: 'https://example.com/vocab#nickname' }]), loader)).resolves.toBeUndefined();
  await expect(assertSafe(credential({}, [CONTEXT_URLS.credentialsV1, 'https://schema.org/']), loader)).rejects.toMatchObject({ code: 'unknown_context', url: 'https://schema.org/' });
});

test('public ids: the reference, a colon, a safe file name', () => {
  expect(publicContextId(REF, 'employee-v1.jsonld')).toBe(`${REF}:employee-v1.jsonld`);
  expect(parsePublicContextId(`${REF}:employee-v1.jsonld`)).toEqual({ ref: REF, contextFileId: 'employee-v1.jsonld' });
  for (const bad of ['employee.jsonld', `:x.jsonld`, `${REF}:`, `${REF}:../x`, `${REF}:.hidden`, `${REF}:a/b`]) expect(parsePublicContextId(bad)).toBeNull();
  for (const ok of ['a', 'A.jsonld', 'v1_2-3.json', 'x'.repeat(128)]) expect(CONTEXT_FILE_ID.test(ok)).toBe(true);
  for (const bad of ['', '.a', '-a', 'a..b', 'a b', 'a:b', 'x'.repeat(129), 'ä.jsonld']) expect(CONTEXT_FILE_ID.test(bad)).toBe(false);
});

test('content comparison ignores key order at every level, nothing else', () => {
  expect(sortedJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } })).toBe(sortedJson({ a: { c: null, d: [1, { e: 3, f: 2 }] }, b: 1 }));
  expect(sortedJson({ a: [1, 2] })).not.toBe(sortedJson({ a: [2, 1] }));
  expect(sortedJson({ a: '1' })).not.toBe(sortedJson({ a: 1 }));
});
