import {
  draftFromGeneric,
  draftFromJwt,
  draftFromSdJwt,
  issuableConfiguration,
  parsePointer,
  SupportedCredentialService,
  toPointer,
  unstorable,
  validateDraft,
  validateSubject,
} from '../../lib/oid4vci/supported';
import type { IssuableConfiguration, SupportedCredentialRecord } from '../../lib/oid4vci/records';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { keys, tenantScope, WALLET_ISSUER_VERSION } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const CLAIMS = {
  given_name: { mandatory: true, value_type: 'string', display: [{ name: 'Given name', locale: 'en' }] },
  age: { value_type: 'integer' },
  birthdate: { mandatory: true, value_type: 'date' },
  address: { street: { value_type: 'string' }, postal: { code: { mandatory: true, value_type: 'string' } } },
  nationalities: { '0': { mandatory: true, value_type: 'string' }, '1': { value_type: 'string' } },
  'a/b~c': { value_type: 'boolean' },
  portrait: { value_type: 'image/jpeg' },
  anything: {},
};

const sd = (over: Record<string, unknown> = {}) => draftFromSdJwt({ id: 'Pid', vct: 'https://example.com/pid', claims: CLAIMS, ...over } as never);
const jwt = (over: Record<string, unknown> = {}) =>
  draftFromJwt({ id: 'Degree', type: ['VerifiableCredential', 'UniversityDegree'], '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { degree: { mandatory: true } }, ...over } as never);

const paths = (draft: ReturnType<typeof sd>) => validateDraft(draft).map((d) => d.path);

describe('storage shapes (contract 2.1)', () => {
  test('/sd-jwt: format_data {vct, order, claims}, vc_additional_data {sd_list}, the rest top-level', () => {
    const d = draftFromSdJwt({ id: 'Pid', vct: 'urn:pid', claims: { a: {} }, sd_list: ['/a'], display: [{ name: 'PID' }], cryptographic_binding_methods_supported: ['jwk'], cryptographic_suites_supported: ['ES256'] });
    expect(d).toMatchObject({
      identifier: 'Pid',
      format: 'vc+sd-jwt',
      format_data: { vct: 'urn:pid', order: null, claims: { a: {} } },
      vc_additional_data: { sd_list: ['/a'] },
      display: [{ name: 'PID' }],
      cryptographic_binding_methods_supported: ['jwk'],
      cryptographic_suites_supported: ['ES256'],
    });
    expect(Object.keys(d.format_data!)).toEqual(['vct', 'order', 'claims']);
    expect(draftFromSdJwt({ id: 'x', vct: 'v', claims: {}, format: 'dc+sd-jwt' }).format).toBe('dc+sd-jwt');
    expect(draftFromSdJwt({ id: 'x', vct: 'v', claims: {} })).toMatchObject({ vc_additional_data: { sd_list: [] }, display: null, cryptographic_suites_supported: null });
  });

  test('/jwt: format_data {order, types, context, credentialSubject}, vc_additional_data {type, @context}', () => {
    const d = jwt({ order: ['degree'], type: 'VerifiableCredential' });
    expect(d.format).toBe('jwt_vc_json');
    expect(d.format_data).toEqual({ order: ['degree'], types: ['VerifiableCredential'], context: ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { degree: { mandatory: true } } });
    expect(d.vc_additional_data).toEqual({ type: ['VerifiableCredential'], '@context': ['https://www.w3.org/2018/credentials/v1'] });
  });

  test('generic: what format_data holds stays there, absent top-level copies are null', () => {
    const fd = { vct: 'v', claims: {}, display: [{ name: 'In fd' }], cryptographic_binding_methods_supported: ['did:key'] };
    const d = draftFromGeneric({ id: 'g', format: 'vc+sd-jwt', format_data: fd });
    expect(d).toMatchObject({ format_data: fd, vc_additional_data: null, display: null, cryptographic_binding_methods_supported: null, cryptographic_suites_supported: null });
    const top = draftFromGeneric({ id: 'g', format: 'vc+sd-jwt', format_data: { vct: 'v', claims: {} }, display: [{ name: 'Top' }] });
    expect(top.display).toEqual([{ name: 'Top' }]);
  });
});

describe('validation of a supported credential', () => {
  test('a full SD-JWT configuration with nested, numeric and escaped claims passes', () => {
    expect(validateDraft(sd({ sd_list: ['/given_name', '/address', '/address/postal/code', '/nationalities/0', '/a~1b~0c', '/anything'], order: ['given_name'] }))).toEqual([]);
  });

  test.each([
    ['/iat', 'sd_list.0'],
    ['/iss', 'sd_list.0'],
    ['/exp', 'sd_list.0'],
    ['/nbf', 'sd_list.0'],
    ['/vct', 'sd_list.0'],
    ['/cnf', 'sd_list.0'],
    ['/cnf/jwk', 'sd_list.0'],
    ['/status', 'sd_list.0'],
    ['/status/status_list/idx', 'sd_list.0'],
  ])('sd_list %s is refused: SD-JWT VC keeps it in the clear', (pointer, path) => {
    const problems = validateDraft(sd({ sd_list: [pointer] }));
    expect(problems).toEqual([{ path, message: expect.stringContaining('in the clear') }]);
  });

  test('sd_list entries must be JSON pointers to claims of the tree', () => {
    const problems = validateDraft(sd({ sd_list: ['/nope', 'given_name', '/address/street/x', '/a~2', '/given_name', '/given_name', '/nationalities/2', '/a/b~c'] }));
    expect(problems.map((p) => p.path)).toEqual(['sd_list.0', 'sd_list.1', 'sd_list.2', 'sd_list.3', 'sd_list.5', 'sd_list.6', 'sd_list.7']);
    expect(problems[0]!.message).toMatch(/\/nope names no claim/);
    expect(problems[1]!.message).toMatch(/not a JSON pointer/);
    expect(problems[4]!.message).toMatch(/listed twice/);
  });

  test('SD-JWT needs vct and claims; claims are objects; value types are known ones', () => {
    expect(paths(draftFromGeneric({ id: 'g', format: 'vc+sd-jwt', format_data: {} }))).toEqual(['format_data.vct', 'format_data.claims']);
    expect(paths(draftFromGeneric({ id: 'g', format: 'dc+sd-jwt', format_data: null }))).toEqual(['format_data.vct', 'format_data.claims']);
    const bad = sd({ claims: { a: 'x', b: { value_type: 'colour' }, c: { d: { value_type: 'image/png' }, e: [] }, f: { display: 'no' }, _sd: {}, iss: {} } });
    expect(paths(bad)).toEqual(['claims.a', 'claims.b.value_type', 'claims.c.e', 'claims.f.display', 'claims._sd', 'claims.iss']);
    expect(paths(sd({ claims: { g: { mandatory: 'yes' } } }))).toEqual(['claims.g.mandatory']); // not a leaf: a group whose member is no object
  });

  test('claims nest to a bounded depth', () => {
    let deep: Record<string, unknown> = { leaf: { value_type: 'string' } };
    for (let i = 0; i < 20; i++) deep = { [`l${i}`]: deep };
    expect(validateDraft(sd({ claims: deep, sd_list: [] }))).toEqual([expect.objectContaining({ message: expect.stringContaining('nest at most') })]);
  });

  test('jwt_vc_json needs VerifiableCredential among its types and a VC context first', () => {
    expect(validateDraft(jwt())).toEqual([]);
    expect(validateDraft(jwt({ '@context': ['https://www.w3.org/ns/credentials/v2', 'https://example.com/ctx'] }))).toEqual([]);
    expect(paths(jwt({ type: ['UniversityDegree'] }))).toEqual(['type']);
    expect(paths(jwt({ '@context': ['https://example.com/ctx'] }))).toEqual(['@context']);
    expect(paths(draftFromGeneric({ id: 'g', format: 'jwt_vc_json', format_data: { credentialSubject: {} } }))).toEqual(['format_data.types', 'format_data.context']);
    const generic = draftFromGeneric({
      id: 'g',
      format: 'jwt_vc_json',
      format_data: { credentialSubject: { x: {} } },
      vc_additional_data: { type: ['VerifiableCredential'], '@context': ['https://www.w3.org/2018/credentials/v1'] },
    });
    expect(validateDraft(generic)).toEqual([]);
    expect(paths(draftFromGeneric({ ...generic, id: 'g', vc_additional_data: { type: ['X'], '@context': ['https://www.w3.org/2018/credentials/v1'] } } as never))).toEqual(['vc_additional_data.type']);
  });

  test('display entries are checked shallowly, wherever they are', () => {
    const d = draftFromGeneric({
      id: 'g',
      format: 'vc+sd-jwt',
      format_data: { vct: 'v', claims: {}, display: [{ name: 3 }], cryptographic_binding_methods_supported: 'jwk' },
      display: [{ name: 'ok', logo: { url: 'https://x/y.png', alt_text: 'logo' }, extra: true }, 'no', { logo: { uri: 5 } }] as never,
    });
    expect(paths(d)).toEqual(['display.1', 'display.2.logo.uri', 'format_data.display.0.name', 'format_data.cryptographic_binding_methods_supported']);
  });
});

describe('issuableConfiguration: one view of the three shapes', () => {
  const record = (d: ReturnType<typeof sd>): SupportedCredentialRecord => {
    const { paths: _p, ...rest } = d;
    return { ...rest, supported_cred_id: 'sc1', wallet_id: '7', created_at: 't', updated_at: 't' };
  };

  test('from /sd-jwt', () => {
    const c = issuableConfiguration(record(sd({ sd_list: ['/given_name'], order: ['given_name'], display: [{ name: 'PID' }], cryptographic_suites_supported: ['ES256'] })));
    expect(c).toEqual({
      id: 'Pid',
      supportedCredId: 'sc1',
      format: 'vc+sd-jwt',
      vct: 'https://example.com/pid',
      claims: CLAIMS,
      sdList: ['/given_name'],
      order: ['given_name'],
      display: [{ name: 'PID' }],
      bindingMethods: null,
      signingAlgs: ['ES256'],
    });
  });

  test('from the generic endpoint: display and binding methods from format_data', () => {
    const c = issuableConfiguration(
      record(
        draftFromGeneric({
          id: 'g',
          format: 'dc+sd-jwt',
          format_data: { vct: 'v', claims: { a: {} }, display: [{ name: 'In fd' }], cryptographic_binding_methods_supported: ['did:jwk'], credential_signing_alg_values_supported: ['EdDSA'] },
          vc_additional_data: { sd_list: ['/a'] },
        }),
      ),
    );
    expect(c).toMatchObject({ format: 'dc+sd-jwt', vct: 'v', sdList: ['/a'], display: [{ name: 'In fd' }], bindingMethods: ['did:jwk'], signingAlgs: ['EdDSA'], order: null });
  });

  test('from /jwt and from generic jwt_vc_json (vc_additional_data first, else format_data)', () => {
    const a = issuableConfiguration(record(jwt({ cryptographic_binding_methods_supported: ['did:key'] })));
    expect(a).toEqual({
      id: 'Degree',
      supportedCredId: 'sc1',
      format: 'jwt_vc_json',
      types: ['VerifiableCredential', 'UniversityDegree'],
      context: ['https://www.w3.org/2018/credentials/v1'],
      claims: { degree: { mandatory: true } },
      sdList: [],
      order: null,
      display: null,
      bindingMethods: ['did:key'],
      signingAlgs: null,
    });
    const b = issuableConfiguration(
      record(draftFromGeneric({ id: 'g', format: 'jwt_vc_json', format_data: { types: ['VerifiableCredential', 'B'], context: ['https://www.w3.org/ns/credentials/v2'], credentialSubject: {} } })),
    );
    expect(b).toMatchObject({ types: ['VerifiableCredential', 'B'], context: ['https://www.w3.org/ns/credentials/v2'], claims: {} });
  });
});

describe('validateSubject', () => {
  const config: IssuableConfiguration = { id: 'Pid', supportedCredId: 's', format: 'vc+sd-jwt', vct: 'v', claims: CLAIMS, sdList: [], order: null, display: null, bindingMethods: null, signingAlgs: null };
  const ok = { given_name: 'Erika', birthdate: '1964-08-12', nationalities: ['DE'], address: { postal: { code: '51147' } } };

  test('a fitting subject passes: arrays for numeric groups, unknown value types take anything', () => {
    expect(validateSubject(config, ok)).toEqual([]);
    expect(validateSubject(config, { ...ok, age: 60, nationalities: { '0': 'DE', '1': 'FR' }, 'a/b~c': true, portrait: 'data:image/jpeg;base64,AA', anything: [1] })).toEqual([]);
    const loose = { ...config, claims: { x: { value_type: 'colour' } } };
    expect(validateSubject(loose, { x: { r: 1 } })).toEqual([]);
  });

  test('missing mandatory claims, at any depth, named by pointer', () => {
    expect(validateSubject(config, {})).toEqual([
      { path: '/given_name', message: '/given_name: mandatory claim missing' },
      { path: '/birthdate', message: '/birthdate: mandatory claim missing' },
      { path: '/address/postal/code', message: '/address/postal/code: mandatory claim missing' },
      { path: '/nationalities/0', message: '/nationalities/0: mandatory claim missing' },
    ]);
    expect(validateSubject(config, { ...ok, address: { street: 'Heidestraße 17' } }).map((p) => p.path)).toEqual(['/address/postal/code']);
  });

  test('unknown claims, at any depth', () => {
    expect(validateSubject(config, { ...ok, nick: 'E', address: { postal: { code: '1', box: 2 } }, nationalities: ['DE', 'FR', 'IT'] }).map((p) => p.path)).toEqual([
      '/address/postal/box',
      '/nationalities/2',
      '/nick',
    ]);
    expect(validateSubject(config, { ...ok, 'x/y': 1 })).toEqual([{ path: '/x~1y', message: expect.stringContaining('/x~1y: unknown claim') }]);
  });

  test('values of the wrong type', () => {
    const problems = validateSubject(config, { ...ok, given_name: 5, age: 1.5, birthdate: '1964-02-30', 'a/b~c': 'yes', portrait: 1, address: 'Köln' });
    expect(problems).toEqual([
      { path: '/given_name', message: '/given_name: must be a string' },
      { path: '/age', message: '/age: must be an integer' },
      { path: '/birthdate', message: '/birthdate: must be an ISO 8601 date (YYYY-MM-DD)' },
      { path: '/address', message: '/address: must be an object (a group of claims)' },
      { path: '/a~1b~0c', message: '/a~1b~0c: must be a boolean' },
      { path: '/portrait', message: expect.stringContaining('/portrait: must be a string') },
    ]);
    const types = { ...config, claims: { n: { value_type: 'number' }, d: { value_type: 'date-time' }, o: { value_type: 'object' }, a: { value_type: 'array' } } };
    expect(validateSubject(types, { n: 1.5, d: '2026-01-01T10:00:00Z', o: {}, a: [] })).toEqual([]);
    expect(validateSubject(types, { n: '1', d: '2026-01-01', o: [], a: {} }).map((p) => p.path)).toEqual(['/n', '/d', '/o', '/a']);
    expect(validateSubject(types, { n: null })).toEqual([{ path: '/n', message: expect.stringContaining('null is not a value') }]);
  });

  test('jwt_vc_json subjects may carry id; SD-JWT ones may not', () => {
    const j = { ...config, format: 'jwt_vc_json' as const, claims: { degree: {} } };
    expect(validateSubject(j, { id: 'did:key:z6Mk', degree: 'BSc' })).toEqual([]);
    expect(validateSubject({ ...config, claims: {} }, { id: 'x' }).map((p) => p.path)).toEqual(['/id']);
  });
});

test('what DynamoDB cannot store (an empty member name, deep nesting) is a 400, not a 500', () => {
  expect(paths(draftFromGeneric({ id: 'g', format: 'vc+sd-jwt', format_data: { vct: 'v', claims: {}, x: [{ '': 1 }] } }))).toEqual(['format_data.x.0.']);
  let deep: unknown = 1;
  for (let i = 0; i < 30; i++) deep = [deep];
  expect(paths(draftFromGeneric({ id: 'g', format: 'vc+sd-jwt', format_data: { vct: 'v', claims: {} }, vc_additional_data: { deep } }))).toEqual([expect.stringMatching(/^vc_additional_data\.deep(\.0)+$/)]);
  expect(unstorable({ a: { b: [1, { c: 'd' }] } }, 'x')).toEqual([]);
});

test('JSON pointers: RFC 6901 escapes both ways', () => {
  expect(parsePointer('/a~1b/~0c/0')).toEqual(['a/b', '~c', '0']);
  expect(parsePointer('a')).toBeNull();
  expect(parsePointer('/a~')).toBeNull();
  expect(parsePointer('')).toBeNull();
  expect(toPointer(['a/b', '~c', '0'])).toBe('/a~1b/~0c/0');
});

describe('SupportedCredentialService', () => {
  const scope = tenantScope('7');
  const other = tenantScope('8');
  /** A store with both wallets' records (a change of supported credentials counts on the wallet's record). */
  const walletsStore = async () => {
    const store = new MemoryStore();
    await store.write([scope, other].map((s) => ({ type: 'put' as const, item: { ...keys.wallet(s), type: 'wallet', wallet_id: s.walletId } })));
    return store;
  };

  test('ids are unique per wallet; deleting frees the id; another wallet has its own; each change counts on the wallet record', async () => {
    const store = await walletsStore();
    const svc = new SupportedCredentialService({ store, now: () => new Date('2026-11-23T10:00:00Z') });
    const a = await svc.create(scope, sd());
    expect(a).toMatchObject({ wallet_id: '7', identifier: 'Pid', created_at: '2026-11-23T10:00:00.000Z', updated_at: '2026-11-23T10:00:00.000Z' });
    expect(a).not.toHaveProperty('paths');
    await expect(svc.create(scope, jwt({ id: 'Pid' }))).rejects.toMatchObject({ status: 409, code: 'identifier_taken' });
    await expect(svc.create(other, sd())).resolves.toMatchObject({ wallet_id: '8' });
    expect(await svc.get(scope, a.supported_cred_id)).toEqual(a);
    await expect(svc.get(other, a.supported_cred_id)).rejects.toMatchObject({ status: 404, code: 'supported_credential_not_found' });
    await svc.delete(scope, a.supported_cred_id);
    expect(await store.get(oid4vciKeys.supportedIdentifier(scope, 'Pid'))).toBeUndefined();
    await expect(svc.delete(scope, a.supported_cred_id)).rejects.toMatchObject({ status: 404 });
    await expect(svc.create(scope, sd())).resolves.toMatchObject({ identifier: 'Pid' });
    // Created, refused (nothing written), deleted, created: three changes; the other wallet's one is its own.
    expect((await store.get(keys.wallet(scope)))![WALLET_ISSUER_VERSION]).toBe(3);
    expect((await store.get(keys.wallet(other)))![WALLET_ISSUER_VERSION]).toBe(1);
  });

  test('an invalid draft is a 400 naming every problem, and stores nothing', async () => {
    const store = new MemoryStore();
    const svc = new SupportedCredentialService({ store });
    await expect(svc.create(scope, sd({ sd_list: ['/iat', '/nope'] }))).rejects.toMatchObject({
      status: 400,
      code: 'validation_failed',
      details: [{ path: 'sd_list.0' }, { path: 'sd_list.1' }],
    });
    expect(store.items.size).toBe(0);
  });

  test('list filters, and pages', async () => {
    const svc = new SupportedCredentialService({ store: await walletsStore() });
    const a = await svc.create(scope, sd());
    const b = await svc.create(scope, jwt());
    const c = await svc.create(scope, sd({ id: 'Dc', format: 'dc+sd-jwt' }));
    expect((await svc.list(scope)).map((r) => r.identifier).sort()).toEqual(['Dc', 'Degree', 'Pid']);
    expect(await svc.list(scope, { format: 'jwt_vc_json' })).toEqual([b]);
    expect(await svc.list(scope, { identifier: 'Dc' })).toEqual([c]);
    expect(await svc.list(scope, { supported_cred_id: a.supported_cred_id })).toEqual([a]);
    expect(await svc.list(other)).toEqual([]);
    const first = await svc.listPage(scope, { limit: 2, cursor: undefined });
    expect(first.items).toHaveLength(2);
    const second = await svc.listPage(scope, { limit: 2, cursor: first.next! });
    expect([...first.items, ...second.items].map((r) => r.identifier).sort()).toEqual(['Dc', 'Degree', 'Pid']);
    expect(second.next).toBeNull();
    await expect(svc.listPage(other, { limit: 2, cursor: first.next! })).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
  });
});
