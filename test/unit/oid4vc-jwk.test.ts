import { generateKeyPairSync, sign } from 'node:crypto';
import type { Jwk } from '@openid4vc/oauth2';
import { oid4vcCallbacks } from '../../lib/oid4vc/callbacks';
import { headerJwk, privateJwkMembers } from '../../lib/oid4vc/jwk';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function es256Jws(header: Record<string, unknown>, payload: Record<string, unknown>, key: ReturnType<typeof generateKeyPairSync>['privateKey']): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

test('private members of every key type are found; public keys and non-objects have none', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  expect(privateJwkMembers(publicKey.export({ format: 'jwk' }))).toEqual([]);
  expect(privateJwkMembers(privateKey.export({ format: 'jwk' }))).toEqual(['d']);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  expect(privateJwkMembers(rsa)).toEqual(['d', 'p', 'q', 'dp', 'dq', 'qi']);
  expect(privateJwkMembers({ kty: 'oct', k: 'c2VjcmV0' })).toEqual(['k']);
  expect(privateJwkMembers({ kty: 'RSA', n: 'x', e: 'AQAB', oth: [] })).toEqual(['oth']);
  for (const v of [undefined, null, 'd', 1]) expect(privateJwkMembers(v)).toEqual([]);
  // Only own members count: a `d` on the prototype is not the key's.
  expect(privateJwkMembers(Object.create({ d: 'x' }))).toEqual([]);
});

test("a compact JWS's header jwk is read, and anything unreadable has none", () => {
  expect(headerJwk(`${b64({ alg: 'ES256', jwk: { kty: 'EC', d: 'x' } })}.e30.sig`)).toEqual({ kty: 'EC', d: 'x' });
  expect(headerJwk(`${b64({ alg: 'ES256' })}.e30.sig`)).toBeUndefined();
  expect(headerJwk('not-base64-json.e30.sig')).toBeUndefined();
  expect(headerJwk(`${b64([1])}.e30.sig`)).toBeUndefined();
  expect(headerJwk('')).toBeUndefined();
});

test('the libraries\' verifyJwt callback never verifies against a key that came with private members', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = publicKey.export({ format: 'jwk' }) as Jwk;
  const withPrivate = privateKey.export({ format: 'jwk' }) as Jwk;
  const compact = es256Jws({ alg: 'ES256', typ: 'dpop+jwt', jwk: withPrivate }, { htm: 'POST' }, privateKey);
  const { verifyJwt } = oid4vcCallbacks();
  // The same signature verifies against the public key alone: only the private member makes the difference.
  expect(await verifyJwt({ method: 'jwk', alg: 'ES256', publicJwk }, { header: {}, payload: {}, compact } as never)).toMatchObject({ verified: true });
  expect(await verifyJwt({ method: 'jwk', alg: 'ES256', publicJwk: withPrivate }, { header: {}, payload: {}, compact } as never)).toEqual({ verified: false });
});
