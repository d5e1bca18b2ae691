import { createHash, generateKeyPairSync, randomBytes, sign as nodeSign, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import { CompactSign, type JWK } from 'jose';
import { SDJwtInstance } from '@sd-jwt/core';
import { issueJwtVcJson, issueSdJwtVc } from '../../lib/oid4vci/protocol/formats';
import type { IssuableConfiguration } from '../../lib/oid4vci/records';
import { selfResolve } from '../../lib/resolver/resolver';
import { verifyJwtVpPresentation } from '../../lib/oid4vp/verification/jwt-vp';
import { CLOCK_SKEW_SECONDS, decodeDisclosure, reconstructClaims, verifySdJwtPresentation, verifySignature } from '../../lib/oid4vp/verification/sd-jwt';
import { PresentationInvalidError, type InvalidReason, type StatusChecker, type StatusResult, type VerificationContext } from '../../lib/oid4vp/verification/types';

// ---- keys, DIDs and signing -----------------------------------------------------------------

interface Key {
  readonly alg: 'ES256' | 'EdDSA';
  readonly privateKey: KeyObject;
  readonly jwk: JWK;
}
const es256 = (): Key => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { alg: 'ES256', privateKey, jwk: publicKey.export({ format: 'jwk' }) as JWK };
};
const ed25519 = (): Key => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { alg: 'EdDSA', privateKey, jwk: publicKey.export({ format: 'jwk' }) as JWK };
};
const didKey = (k: Key) => `did:key:z${bs58.encode(Buffer.concat([Buffer.from([0xed, 0x01]), Buffer.from(k.jwk.x!, 'base64url')]))}`;
const didJwk = (k: Key) => `did:jwk:${Buffer.from(JSON.stringify(k.jwk)).toString('base64url')}`;
const vmOf = (did: string) => selfResolve(did)!.verificationMethod[0]!.id;

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const signJwt = (key: Key, header: Record<string, unknown>, payload: Record<string, unknown>) =>
  new CompactSign(enc(payload)).setProtectedHeader({ alg: key.alg, ...header } as { alg: string }).sign(key.privateKey);
const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const sha = (s: string, alg = 'sha256') => createHash(alg).update(s).digest('base64url');
const fakeSig = 'A'.repeat(86);
/** A compact JWS with any header: for checks that come before the signature is verified. */
const unsigned = (header: Record<string, unknown>, payload: Record<string, unknown>) => `${b64json(header)}.${b64json(payload)}.${fakeSig}`;

const ISSUER = 'did:web:issuer.example';
const ISSUER_KID = `${ISSUER}#key-1`;
const ED_ISSUER = 'did:web:ed-issuer.example';
const ED_ISSUER_KID = `${ED_ISSUER}#key-1`;
const issuerKey = es256();
const edIssuerKey = ed25519();
const holderKey = es256();
const otherKey = es256();
const edHolder = ed25519();
const webHolder = 'did:web:holder.example';
const webHolderKey = ed25519();

const NOW = new Date('2026-03-01T12:00:00Z');
const now = Math.floor(NOW.getTime() / 1000);
const AUD = 'x509_san_dns:verifier.example';
const NONCE = 'nonce-8f2a';

// ---- the fake world: issuer keys by kid, status lists by entry ------------------------------

const published: Record<string, JWK> = {
  [ISSUER_KID]: issuerKey.jwk,
  [ED_ISSUER_KID]: edIssuerKey.jwk,
  [`${webHolder}#key-1`]: webHolderKey.jwk,
};
const statuses = new Map<string, StatusResult['meaning']>();
// Each test sets the entries it needs; none sees another's.
afterEach(() => statuses.clear());
const status: StatusChecker = {
  ietf: async ({ uri, idx }) => {
    if (uri.includes('down')) throw new Error('connect ETIMEDOUT');
    const meaning = statuses.get(`${uri}#${idx}`) ?? 'valid';
    return { value: meaning === 'valid' ? 0 : meaning === 'revoked' ? 1 : 2, meaning };
  },
  w3c: async (entry) => {
    const meaning = statuses.get(`${String(entry.statusListCredential)}#${String(entry.statusListIndex)}`) ?? 'valid';
    return { value: meaning === 'valid' ? 0 : 1, meaning };
  },
};
const ctx = (over: Partial<VerificationContext> = {}): VerificationContext => ({
  audiences: [AUD, 'verifier.example'],
  nonce: NONCE,
  now: NOW,
  maxIatSkewSeconds: 300,
  resolveIssuerKey: async ({ header }) => {
    const jwk = published[String(header.kid)];
    if (!jwk) throw new Error(`unknown kid ${String(header.kid)}`);
    return jwk;
  },
  status,
  ...over,
});

/** The promise is refused for `reason`, with exactly `detail` when given (else any detail). */
async function rejects(p: Promise<unknown>, reason: InvalidReason, detail?: string) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PresentationInvalidError);
  expect({ reason: (err as PresentationInvalidError).reason, detail: (err as PresentationInvalidError).detail }).toEqual({ reason, detail: detail ?? expect.any(String) });
}

// ---- an SD-JWT builder with every knob -----------------------------------------------------

const disclosure = (...parts: unknown[]) => b64json([randomBytes(12).toString('base64url'), ...parts]);
const ref = (d: string) => sha(d);

/** given_name and family_name disclosable, address.street nested, nationalities[0] an array element, one decoy. */
function standardDisclosures() {
  const given = disclosure('given_name', 'Erika');
  const family = disclosure('family_name', 'Mustermann');
  const street = disclosure('street_address', 'Heidestr. 17');
  const nat = disclosure('DE');
  return { given, family, street, nat };
}

function standardPayload(d: ReturnType<typeof standardDisclosures>, over: Record<string, unknown> = {}) {
  return {
    iss: ISSUER,
    iat: now - 3600,
    nbf: now - 3600,
    exp: now + 3600,
    vct: 'urn:eudi:pid:1',
    cnf: { jwk: holderKey.jwk },
    _sd_alg: 'sha-256',
    _sd: [ref(d.given), ref(d.family), sha('decoy')],
    address: { _sd: [ref(d.street)], locality: 'Köln' },
    nationalities: [{ '...': ref(d.nat) }, 'FR', { '...': sha('decoy-2') }],
    status: { status_list: { idx: 7, uri: 'https://status.example/lists/1' } },
    ...over,
  };
}

interface KbOpts {
  key?: Key;
  typ?: string;
  aud?: unknown;
  nonce?: string;
  iat?: number;
  sdHash?: string;
  alg?: 'ES256' | 'EdDSA';
}
async function kbJwt(sdPart: string, o: KbOpts = {}, hashAlg = 'sha256') {
  const key = o.key ?? holderKey;
  return signJwt(key, { typ: o.typ ?? 'kb+jwt' }, { aud: o.aud ?? AUD, nonce: o.nonce ?? NONCE, iat: o.iat ?? now - 5, sd_hash: o.sdHash ?? sha(sdPart, hashAlg) });
}

async function sdJwt(payload: Record<string, unknown>, o: { key?: Key; header?: Record<string, unknown> } = {}) {
  return signJwt(o.key ?? issuerKey, { typ: 'dc+sd-jwt', kid: o.key === edIssuerKey ? ED_ISSUER_KID : ISSUER_KID, ...o.header }, payload);
}

const sdPartOf = (jwt: string, disclosures: readonly string[]) => `${jwt}~${disclosures.map((d) => `${d}~`).join('')}`;
async function present(jwt: string, disclosures: readonly string[], kb: KbOpts | null = {}, hashAlg = 'sha256') {
  const part = sdPartOf(jwt, disclosures);
  return kb ? part + (await kbJwt(part, kb, hashAlg)) : part;
}

const verify = (p: string, c = ctx(), requireKeyBinding = true) => verifySdJwtPresentation(p, c, { requireKeyBinding });

// ---- SD-JWT VC --------------------------------------------------------------------------------

describe('verifySdJwtPresentation: accepted presentations', () => {
  it('verifies issuer signature, disclosures, key binding and status, and reconstructs the claims', async () => {
    const d = standardDisclosures();
    const jwt = await sdJwt(standardPayload(d));
    const out = await verify(await present(jwt, [d.given, d.street, d.nat]));
    expect(out).toEqual({
      format: 'dc+sd-jwt',
      issuer: ISSUER,
      vct: 'urn:eudi:pid:1',
      claims: {
        iss: ISSUER,
        iat: now - 3600,
        nbf: now - 3600,
        exp: now + 3600,
        vct: 'urn:eudi:pid:1',
        cnf: { jwk: holderKey.jwk },
        given_name: 'Erika',
        address: { locality: 'Köln', street_address: 'Heidestr. 17' },
        nationalities: ['DE', 'FR'],
        status: { status_list: { idx: 7, uri: 'https://status.example/lists/1' } },
      },
      disclosedPaths: [['address', 'street_address'], ['nationalities', 0], ['given_name']],
      holderBound: true,
      status: { value: 0, meaning: 'valid' },
    });
  });

  it('accepts vc+sd-jwt, an EdDSA issuer and a holder bound by a did:key DID URL', async () => {
    const did = didKey(edHolder);
    const jwt = await sdJwt({ iss: ED_ISSUER, iat: now, vct: 'urn:x', cnf: { kid: vmOf(did) } }, { key: edIssuerKey, header: { typ: 'vc+sd-jwt' } });
    const out = await verify(await present(jwt, [], { key: edHolder }));
    expect(out).toMatchObject({ format: 'vc+sd-jwt', issuer: ED_ISSUER, holderBound: true, disclosedPaths: [] });
    expect(out.status).toBeUndefined();
  });

  it('binds to a did:jwk holder, and to any other DID through the resolver', async () => {
    const jwkDid = didJwk(holderKey);
    const a = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { kid: vmOf(jwkDid) } });
    await expect(verify(await present(a, []))).resolves.toMatchObject({ holderBound: true });
    const b = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { kid: `${webHolder}#key-1` } });
    await expect(verify(await present(b, [], { key: webHolderKey }))).resolves.toMatchObject({ holderBound: true });
  });

  it('accepts recursive disclosures: a disclosed object whose members are themselves disclosures', async () => {
    const locality = disclosure('locality', 'Berlin');
    const street = disclosure('street', 'Unter den Linden');
    const address = disclosure('address', { _sd: [ref(locality), ref(street)], country: 'DE' });
    const jwt = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(address)] });
    const out = await verify(await present(jwt, [locality, address]));
    expect(out.claims.address).toEqual({ country: 'DE', locality: 'Berlin' });
    expect(out.disclosedPaths).toEqual([['address'], ['address', 'locality']]);
  });

  it('accepts array element disclosures, nested in a disclosed element, with indexes of the reconstructed array', async () => {
    const inner = disclosure('b');
    const outer = disclosure(['a', { '...': ref(inner) }]);
    const hidden = disclosure('x');
    const last = disclosure({ k: 1 });
    const jwt = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, list: [{ '...': ref(hidden) }, { '...': ref(outer) }, 'plain', { '...': ref(last) }] });
    const out = await verify(await present(jwt, [outer, inner, last]));
    expect(out.claims.list).toEqual([['a', 'b'], 'plain', { k: 1 }]);
    expect(out.disclosedPaths).toEqual([['list', 0], ['list', 0, 1], ['list', 2]]);
  });

  it('takes sd_hash and disclosure digests with the credential _sd_alg', async () => {
    const given = disclosure('given_name', 'Erika');
    const jwt = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd_alg: 'sha-512', _sd: [sha(given, 'sha512')] });
    const out = await verify(await present(jwt, [given], {}, 'sha512'));
    expect(out.claims).toMatchObject({ given_name: 'Erika' });
    expect(out.claims).not.toHaveProperty('_sd_alg');
  });

  it('without a KB-JWT it verifies when binding is not required (holderBound false)', async () => {
    const d = standardDisclosures();
    const p = await present(await sdJwt(standardPayload(d)), [d.given], null);
    await expect(verify(p, ctx(), false)).resolves.toMatchObject({ holderBound: false, claims: { given_name: 'Erika' } });
  });

  it('accepts an nbf / iat slightly ahead of our clock (skew)', async () => {
    const jwt = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, iat: now + 30, nbf: now + 30 });
    await expect(verify(await present(jwt, []))).resolves.toBeDefined();
  });

  it('accepts nbf and iat exactly at the skew, and a KB-JWT iat exactly at the allowed age; one second more is refused', async () => {
    const at = (t: number) => sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, iat: t, nbf: t });
    await expect(verify(await present(await at(now + CLOCK_SKEW_SECONDS), []))).resolves.toBeDefined();
    await rejects(verify(await present(await at(now + CLOCK_SKEW_SECONDS + 1), [])), 'credential_not_yet_valid');
    await expect(verify(await present(await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, iat: now + CLOCK_SKEW_SECONDS }), []))).resolves.toBeDefined();
    const plain = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk } });
    await expect(verify(await present(plain, [], { iat: now - 300 }))).resolves.toBeDefined();
    await rejects(verify(await present(plain, [], { iat: now - 301 })), 'stale_key_binding');
  });

  it('refuses an empty or non-string iss (malformed_presentation), even though the kid resolves', async () => {
    for (const iss of ['', 42]) await rejects(verify(await present(await sdJwt({ iss, vct: 'urn:x', cnf: { jwk: holderKey.jwk } }), [])), 'malformed_presentation');
  });

  it('accepts a KB-JWT aud array that holds this verifier among others', async () => {
    const plain = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk } });
    await expect(verify(await present(plain, [], { aud: ['https://other.example', AUD] }))).resolves.toMatchObject({ holderBound: true });
    await rejects(verify(await present(plain, [], { aud: ['https://other.example'] })), 'wrong_audience');
  });

  it('verifySignature refuses an algorithm outside ES256 / EdDSA even when the signature is valid (ES384 on P-384)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const jws = await new CompactSign(enc({ a: 1 })).setProtectedHeader({ alg: 'ES384' }).sign(privateKey);
    const jwk = publicKey.export({ format: 'jwk' }) as JWK;
    expect(await verifySignature(jws, jwk, 'ES384')).toBe(false);
    // The same check with an accepted algorithm and the right key verifies.
    const es = es256();
    expect(await verifySignature(await new CompactSign(enc({ a: 1 })).setProtectedHeader({ alg: 'ES256' }).sign(es.privateKey), es.jwk, 'ES256')).toBe(true);
  });

  it('verifySignature verifies with the algorithm asked for, not the one the header names (Ed25519 is not EdDSA here)', async () => {
    // jose would verify this Ed25519-headed JWS with an EdDSA-imported key if it were not told which algorithms to allow.
    const ed = ed25519();
    const headed = (alg: string) => new CompactSign(enc({ a: 1 })).setProtectedHeader({ alg }).sign(ed.privateKey);
    expect({ ed25519: await verifySignature(await headed('Ed25519'), ed.jwk, 'EdDSA'), eddsa: await verifySignature(await headed('EdDSA'), ed.jwk, 'EdDSA') }).toEqual({ ed25519: false, eddsa: true });
  });
});

describe('verifySdJwtPresentation: refusals, one reason each', () => {
  const base = async (over: Record<string, unknown> = {}, o: { key?: Key; header?: Record<string, unknown> } = {}) => {
    const d = standardDisclosures();
    return { d, jwt: await sdJwt(standardPayload(d, over), o) };
  };

  it('malformed_presentation: no ~, a JWT that is not one, an empty disclosure, a missing iss', async () => {
    const { d, jwt } = await base();
    await rejects(verify(jwt), 'malformed_presentation');
    await rejects(verify('abc.def~'), 'malformed_presentation');
    await rejects(verify(`${jwt}~${d.given}~~`, ctx(), false), 'malformed_presentation');
    await rejects(verify(`${jwt}~garbage`), 'malformed_presentation');
    const noIss = await sdJwt({ vct: 'urn:x' });
    await rejects(verify(`${noIss}~`, ctx(), false), 'malformed_presentation');
  });

  it('unsupported_format: typ not an SD-JWT VC, or not one the request allows', async () => {
    const { jwt } = await base({}, { header: { typ: 'JWT' } });
    await rejects(verify(await present(jwt, [])), 'unsupported_format');
    const { jwt: vc } = await base({}, { header: { typ: 'vc+sd-jwt' } });
    await rejects(verifySdJwtPresentation(await present(vc, []), ctx(), { requireKeyBinding: true, allowedFormats: ['dc+sd-jwt'] }), 'unsupported_format');
  });

  it('invalid_issuer_signature: another key, an altered payload, an alg we do not accept', async () => {
    const { jwt } = await base({}, { key: otherKey, header: { kid: ISSUER_KID } });
    await rejects(verify(await present(jwt, [])), 'invalid_issuer_signature');
    const { jwt: good } = await base();
    const [h, , s] = good.split('.');
    const altered = `${h}.${b64json({ ...standardPayload(standardDisclosures()), exp: now + 10 ** 8 })}.${s}`;
    await rejects(verify(await present(altered, [])), 'invalid_issuer_signature');
    const hs = `${b64json({ alg: 'HS256', typ: 'dc+sd-jwt', kid: ISSUER_KID })}.${b64json({ iss: ISSUER })}.${sha('x')}`;
    await rejects(verify(`${hs}~`, ctx(), false), 'invalid_issuer_signature');
  });

  it('issuer_unresolvable for a resolver failure; a resolver refusal passes through', async () => {
    const { jwt } = await base({}, { header: { kid: 'did:web:unknown.example#key-1' } });
    await rejects(verify(await present(jwt, [])), 'issuer_unresolvable');
    const refusing = ctx({ resolveIssuerKey: async () => Promise.reject(new PresentationInvalidError('status_unavailable', 'metadata fetch failed')) });
    await rejects(verify(await present(jwt, []), refusing), 'status_unavailable');
  });

  it('credential_expired / credential_not_yet_valid', async () => {
    await rejects(verify(await present((await base({ exp: now - 1 })).jwt, [])), 'credential_expired');
    await rejects(verify(await present((await base({ exp: now })).jwt, [])), 'credential_expired');
    await rejects(verify(await present((await base({ nbf: now + 3600 })).jwt, [])), 'credential_not_yet_valid');
    await rejects(verify(await present((await base({ iat: now + 3600, nbf: undefined })).jwt, [])), 'credential_not_yet_valid');
  });

  it('unreferenced_disclosure: a tampered disclosure (its digest changed), even under a KB-JWT over the tampered string', async () => {
    const { d, jwt } = await base();
    const [salt] = JSON.parse(Buffer.from(d.given, 'base64url').toString()) as [string];
    const tampered = b64json([salt, 'given_name', 'Mallory']);
    await rejects(verify(await present(jwt, [tampered, d.street])), 'unreferenced_disclosure');
  });

  it('unreferenced_disclosure: a forged disclosure the issuer never signed', async () => {
    const { d, jwt } = await base();
    await rejects(verify(await present(jwt, [d.given, disclosure('is_over_18', true)])), 'unreferenced_disclosure');
    await rejects(verify(await present(jwt, [disclosure('anything')])), 'unreferenced_disclosure');
  });

  it('invalid_disclosure: a digest twice in the signed payload, or in the payload and inside a disclosure', async () => {
    const given = disclosure('given_name', 'Erika');
    const twice = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(given), ref(given)] });
    await rejects(verify(await present(twice, [given])), 'invalid_disclosure');
    // A duplicate is refused even when nothing is disclosed for it.
    const decoys = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [sha('d')], list: [{ '...': sha('d') }] });
    await rejects(verify(await present(decoys, [])), 'invalid_disclosure');
    const inner = disclosure('locality', 'Berlin');
    const outer = disclosure('address', { _sd: [ref(inner)] });
    const both = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(outer), ref(inner)] });
    await rejects(verify(await present(both, [outer, inner])), 'invalid_disclosure');
  });

  it('invalid_disclosure: the same disclosure presented twice', async () => {
    const { d, jwt } = await base();
    await rejects(verify(await present(jwt, [d.given, d.given])), 'invalid_disclosure');
  });

  it('invalid_disclosure: a name that exists as a plain claim, _sd or ..., or a registered claim made disclosable', async () => {
    const clash = disclosure('vct', 'urn:other');
    const a = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(clash)] });
    await rejects(verify(await present(a, [clash])), 'invalid_disclosure');
    const nestedClash = disclosure('locality', 'Bonn');
    const b = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, address: { locality: 'Köln', _sd: [ref(nestedClash)] } });
    await rejects(verify(await present(b, [nestedClash])), 'invalid_disclosure');
    for (const name of ['_sd', '...']) {
      const bad = disclosure(name, 'x');
      const c = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(bad)] });
      await rejects(verify(await present(c, [bad])), 'invalid_disclosure');
    }
    const exp = disclosure('exp', now + 10 ** 8);
    const e = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(exp)] });
    await rejects(verify(await present(e, [exp])), 'invalid_disclosure');
  });

  it('invalid_disclosure: not [salt, name, value] / [salt, value], or the wrong kind for where it is referenced', async () => {
    const { jwt } = await base();
    for (const bad of [b64json({ a: 1 }), b64json(['s', 'n', 'v', 'x']), b64json([1, 'n', 'v']), b64json(['s', 2, 'v']), 'not*base64', Buffer.from('[').toString('base64url')]) {
      await rejects(verify(await present(jwt, [bad])), 'invalid_disclosure');
    }
    const element = disclosure('DE');
    const inSd = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, _sd: [ref(element)] });
    await rejects(verify(await present(inSd, [element])), 'invalid_disclosure');
    const property = disclosure('given_name', 'E');
    const inArray = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, list: [{ '...': ref(property) }] });
    await rejects(verify(await present(inArray, [property])), 'invalid_disclosure');
  });

  it('missing_key_binding when binding is required and there is no KB-JWT', async () => {
    const { d, jwt } = await base();
    await rejects(verify(await present(jwt, [d.given], null)), 'missing_key_binding');
  });

  it('invalid_key_binding: KB-JWT by a different key, the wrong typ, no cnf, an unresolvable holder DID', async () => {
    const { d, jwt } = await base();
    await rejects(verify(await present(jwt, [d.given], { key: otherKey })), 'invalid_key_binding');
    await rejects(verify(await present(jwt, [d.given], { typ: 'JWT' })), 'invalid_key_binding');
    const unbound = await sdJwt({ iss: ISSUER, vct: 'urn:x' });
    await rejects(verify(await present(unbound, [])), 'invalid_key_binding');
    const lost = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { kid: 'did:web:nobody.example#key-1' } });
    await rejects(verify(await present(lost, [])), 'invalid_key_binding');
    // did:key of one key, KB signed by another
    const bound = await sdJwt({ iss: ISSUER, vct: 'urn:x', cnf: { kid: vmOf(didKey(edHolder)) } });
    await rejects(verify(await present(bound, [], { key: ed25519() })), 'invalid_key_binding');
  });

  it('wrong_audience / wrong_nonce', async () => {
    const { d, jwt } = await base();
    await rejects(verify(await present(jwt, [d.given], { aud: 'x509_san_dns:evil.example' })), 'wrong_audience');
    await rejects(verify(await present(jwt, [d.given], { nonce: 'another-nonce' })), 'wrong_nonce');
  });

  it('stale_key_binding: iat too old or too far ahead', async () => {
    const { d, jwt } = await base();
    await rejects(verify(await present(jwt, [d.given], { iat: now - 301 })), 'stale_key_binding');
    await rejects(verify(await present(jwt, [d.given], { iat: now + 301 })), 'stale_key_binding');
    await expect(verify(await present(jwt, [d.given], { iat: now - 299 }))).resolves.toBeDefined();
  });

  it('sd_hash_mismatch: a disclosure dropped after the KB-JWT was signed, or a hash over something else', async () => {
    const { d, jwt } = await base();
    const signedOver = sdPartOf(jwt, [d.given, d.street]);
    const kb = await kbJwt(signedOver);
    await rejects(verify(`${sdPartOf(jwt, [d.given])}${kb}`), 'sd_hash_mismatch');
    await rejects(verify(await present(jwt, [d.given], { sdHash: sha(jwt) })), 'sd_hash_mismatch');
  });

  it('credential_revoked / credential_suspended / status_unavailable from the status list', async () => {
    const rev = (await base({ status: { status_list: { idx: 1, uri: 'https://status.example/r' } } })).jwt;
    const sus = (await base({ status: { status_list: { idx: 2, uri: 'https://status.example/r' } } })).jwt;
    const down = (await base({ status: { status_list: { idx: 2, uri: 'https://down.example/r' } } })).jwt;
    statuses.set('https://status.example/r#1', 'revoked');
    statuses.set('https://status.example/r#2', 'suspended');
    await rejects(verify(await present(rev, [])), 'credential_revoked');
    await rejects(verify(await present(sus, [])), 'credential_suspended');
    await rejects(verify(await present(down, [])), 'status_unavailable');
    const malformed = (await base({ status: { status_list: { idx: '1', uri: 'https://status.example/r' } } })).jwt;
    await rejects(verify(await present(malformed, [])), 'malformed_presentation');
    // The status claim's shape: an index of 0 is a list's first entry; a negative or fractional index, a
    // uri that is not a string, a status_list or status that is not an object are malformed.
    await expect(verify(await present((await base({ status: { status_list: { idx: 0, uri: 'https://status.example/r' } } })).jwt, []))).resolves.toMatchObject({ status: { meaning: 'valid' } });
    for (const status of [{ status_list: { idx: -1, uri: 'https://status.example/r' } }, { status_list: { idx: 1.5, uri: 'https://status.example/r' } }, { status_list: { idx: 1, uri: 7 } }, { status_list: 'x' }, 'x']) {
      const err = await verify(await present((await base({ status })).jwt, [])).then(() => null, (e: PresentationInvalidError) => e);
      expect({ status, reason: err?.reason, detail: err?.detail }).toEqual({ status, reason: 'malformed_presentation', detail: status === 'x' ? 'status is not an object' : 'status.status_list is not {idx, uri}' });
    }
  });

  it('orders the checks: a bad signature wins over bad disclosures, disclosures over the KB-JWT, the KB-JWT over status', async () => {
    const { jwt } = await base({}, { key: otherKey, header: { kid: ISSUER_KID } });
    await rejects(verify(await present(jwt, [disclosure('x', 1)], { nonce: 'no' })), 'invalid_issuer_signature');
    const { jwt: good } = await base();
    await rejects(verify(await present(good, [disclosure('x', 1)], { nonce: 'no' })), 'unreferenced_disclosure');
    statuses.set('https://status.example/r#1', 'revoked');
    const rev = (await base({ status: { status_list: { idx: 1, uri: 'https://status.example/r' } } })).jwt;
    await rejects(verify(await present(rev, [], { nonce: 'no' })), 'wrong_nonce');
    await rejects(verify(await present(rev, [])), 'credential_revoked');
  });
});

describe('verifySdJwtPresentation: the detail of each refusal (what the verifier records and shows)', () => {
  const base = { iss: ISSUER, vct: 'urn:x', cnf: { jwk: holderKey.jwk } };
  const kbPayload = (part: string) => ({ aud: AUD, nonce: NONCE, iat: now - 5, sd_hash: sha(part) });

  const cases: [string, () => Promise<string>, InvalidReason, string][] = [
    ['expired', async () => present(await sdJwt({ ...base, exp: now - 1 }), []), 'credential_expired', `the credential expired at ${now - 1}`],
    ['nbf ahead', async () => present(await sdJwt({ ...base, nbf: now + CLOCK_SKEW_SECONDS + 1 }), []), 'credential_not_yet_valid', `the credential not valid before ${now + CLOCK_SKEW_SECONDS + 1}`],
    ['iat ahead', async () => present(await sdJwt({ ...base, iat: now + CLOCK_SKEW_SECONDS + 1 }), []), 'credential_not_yet_valid', `the credential issued in the future (${now + CLOCK_SKEW_SECONDS + 1})`],
    ['another typ', async () => present(await sdJwt(base, { header: { typ: 'jwt' } }), []), 'unsupported_format', 'typ jwt is not one of dc+sd-jwt, vc+sd-jwt'],
    ['an issuer alg not accepted', async () => `${unsigned({ typ: 'dc+sd-jwt', alg: 'HS256', kid: ISSUER_KID }, base)}~`, 'invalid_issuer_signature', 'issuer alg HS256 is not accepted'],
    ['no iss', async () => present(await sdJwt({ ...base, iss: '' }), []), 'malformed_presentation', 'the credential has no iss'],
    ['a signature by another key', async () => present(await sdJwt(base, { key: otherKey }), []), 'invalid_issuer_signature', `signature of ${ISSUER} does not verify`],
    ['an _sd_alg not supported', async () => present(await sdJwt({ ...base, _sd_alg: 'sha-1' }), []), 'malformed_presentation', '_sd_alg sha-1 is not supported'],
    ['no key binding', async () => present(await sdJwt(base), [], null), 'missing_key_binding', 'the SD-JWT has no key-binding JWT'],
    ['a KB-JWT that is not a JWS', async () => `${sdPartOf(await sdJwt(base), [])}not-a-jwt`, 'malformed_presentation', 'key-binding JWT is not a compact JWS'],
    ['a KB-JWT typ', async () => present(await sdJwt(base), [], { typ: 'jwt' }), 'invalid_key_binding', 'key-binding JWT typ is jwt, not kb+jwt'],
    [
      'a KB-JWT alg not accepted',
      async () => {
        const part = sdPartOf(await sdJwt(base), []);
        return part + unsigned({ typ: 'kb+jwt', alg: 'HS256' }, kbPayload(part));
      },
      'invalid_key_binding',
      'key-binding alg HS256 is not accepted',
    ],
    ['no cnf', async () => present(await sdJwt({ iss: ISSUER, vct: 'urn:x' }), []), 'invalid_key_binding', 'the credential has no cnf.jwk or cnf.kid to bind to'],
    ['a KB-JWT by another key', async () => present(await sdJwt(base), [], { key: otherKey }), 'invalid_key_binding', 'the key-binding JWT is not signed by the cnf key'],
    ['another audience', async () => present(await sdJwt(base), [], { aud: 'someone-else' }), 'wrong_audience', 'aud "someone-else" is not this verifier'],
    ['another nonce', async () => present(await sdJwt(base), [], { nonce: 'other' }), 'wrong_nonce', 'the key-binding JWT nonce is not the request nonce'],
    ['a stale KB-JWT', async () => present(await sdJwt(base), [], { iat: now - 301 }), 'stale_key_binding', `key-binding iat ${now - 301} is not within 300s of now`],
    ['another sd_hash', async () => present(await sdJwt(base), [], { sdHash: sha('other') }), 'sd_hash_mismatch', 'sd_hash is not the hash of the presented SD-JWT'],
  ];
  test.each(cases)('%s', async (_name, make, reason, detail) => rejects(verify(await make()), reason, detail));

  // Refusals whose detail names a value made in the case (a digest, a prefix of what was sent).
  const parts = async () => (await sdJwt(base)).split('.') as [string, string, string];
  const withSd = async (claims: Record<string, unknown>, disclosures: string[]) => present(await sdJwt({ ...base, ...claims }), disclosures);
  const prefix = (encoded: string) => `${encoded.slice(0, 16)}…`;
  const e = disclosure('DE');
  const given = disclosure('given_name', 'Erika');
  const longJunk = 'bm90IGpzb24gYXQgYWxsLCBqdXN0IHRleHQ';
  const starred = `${given.slice(0, 4)}*${given.slice(4)}`;
  const padded = b64json(['salt', 'n', 'v']).padEnd(24, '=');
  const privateCnf = { cnf: { jwk: { ...holderKey.jwk, d: 'x', p: 'y' } } };
  const made: [string, () => Promise<[presentation: string, detail: string]>, InvalidReason][] = [
    ['no ~ at all', async () => [await sdJwt(base), 'an SD-JWT has at least one ~'], 'malformed_presentation'],
    ['an empty disclosure', async () => [`${await sdJwt(base)}~${given}~~`, 'empty disclosure (~~)'], 'malformed_presentation'],
    ...(
      [
        ['two segments', ([h, p]) => `${h}.${p}`],
        ['four segments', ([h, p, sig]) => `${h}.${p}.${sig}.${sig}`],
        ['an empty header', ([, p, sig]) => `.${p}.${sig}`],
        ['an empty payload', ([h, , sig]) => `${h}..${sig}`],
        ['an empty signature', ([h, p]) => `${h}.${p}.`],
      ] as [string, (x: [string, string, string]) => string][]
    ).map(([name, shape]): (typeof made)[number] => [name, async () => [`${shape(await parts())}~`, 'issuer-signed JWT is not a compact JWS'], 'malformed_presentation']),
    ['a header that is not JSON', async () => [`${longJunk}.${(await parts())[1]}.${fakeSig}~`, 'issuer-signed JWT header or payload is not base64url JSON'], 'malformed_presentation'],
    [
      'a payload with a character outside base64url (which Buffer would skip)',
      async () => {
        const [h, p, sig] = await parts();
        return [`${h}.${p.slice(0, 8)}*${p.slice(8)}.${sig}~`, 'issuer-signed JWT header or payload is not base64url JSON'];
      },
      'malformed_presentation',
    ],
    ['a header that is an array', async () => [`${b64json(['dc+sd-jwt'])}.${b64json(base)}.${fakeSig}~`, 'issuer-signed JWT header or payload is not a JSON object'], 'malformed_presentation'],
    ['a payload that is null', async () => [`${b64json({ typ: 'dc+sd-jwt', alg: 'ES256' })}.${b64json(null)}.${fakeSig}~`, 'issuer-signed JWT header or payload is not a JSON object'], 'malformed_presentation'],
    ['a private key in cnf.jwk', async () => [await withSd(privateCnf, []), 'issuer-signed JWT carries private key members (d, p) in its header jwk or cnf.jwk'], 'malformed_presentation'],
    [
      'a private key in the header jwk and in cnf.jwk',
      async () => [await present(await sdJwt({ ...base, cnf: { jwk: { ...holderKey.jwk, d: 'x' } } }, { header: { jwk: { ...holderKey.jwk, d: 'x', k: 'z' } } }), []), 'issuer-signed JWT carries private key members (d, k) in its header jwk or cnf.jwk'],
      'malformed_presentation',
    ],
    ['a disclosure that is not JSON', async () => [await withSd({}, [longJunk]), `disclosure ${prefix(longJunk)} is not base64url JSON`], 'invalid_disclosure'],
    ['a disclosure with a character outside base64url, though signed', async () => [await withSd({ _sd: [ref(starred)] }, [starred]), `disclosure ${prefix(starred)} is not base64url JSON`], 'invalid_disclosure'],
    ['a padded disclosure, though signed', async () => [await withSd({ _sd: [ref(padded)] }, [padded]), `disclosure ${prefix(padded)} is not base64url JSON`], 'invalid_disclosure'],
    ...[{ a: 1 }, ['a-long-salt-value', 'n', 'v', 'x'], ['salt'], [1, 'n', 'v']].map((shape): (typeof made)[number] => [
      `a disclosure shaped ${JSON.stringify(shape)}`,
      async () => [await withSd({}, [b64json(shape)]), `disclosure ${prefix(b64json(shape))} is not [salt, (name,) value]`],
      'invalid_disclosure',
    ]),
    ['a claim name that is not a string', async () => [await withSd({}, [b64json(['s', 2, 'v'])]), `disclosure ${ref(b64json(['s', 2, 'v']))} has a non-string claim name`], 'invalid_disclosure'],
    ...['_sd', '...'].map((name): (typeof made)[number] => [`the reserved name ${name}`, async () => [await withSd({}, [b64json(['s', name, 'v'])]), `disclosure ${ref(b64json(['s', name, 'v']))} names the reserved claim ${name}`], 'invalid_disclosure']),
    ['a disclosure presented twice', async () => [await withSd({ _sd: [ref(given)] }, [given, given]), `disclosure ${ref(given)} is presented twice`], 'invalid_disclosure'],
    ['a digest signed twice', async () => [await withSd({ _sd: [ref(given)], list: [{ '...': ref(given) }] }, []), `digest ${ref(given)} appears more than once`], 'invalid_disclosure'],
    ['a digest that is not a string, at the root', async () => [await withSd({ _sd: [5] }, []), 'a digest at / is not a string'], 'invalid_disclosure'],
    ['a digest that is not a string, in an object', async () => [await withSd({ address: { _sd: [null] } }, []), 'a digest at /address is not a string'], 'invalid_disclosure'],
    ['a digest that is not a string, two levels down', async () => [await withSd({ address: { geo: { _sd: [null] } } }, []), 'a digest at /address/geo is not a string'], 'invalid_disclosure'],
    ['an element digest that is not a string', async () => [await withSd({ list: ['a', { '...': 5 }] }, []), 'a digest at /list is not a string'], 'invalid_disclosure'],
    ['an element digest beside other keys', async () => [await withSd({ list: [{ '...': ref(e), x: 1 }] }, [e]), 'an array element digest at /list has other keys'], 'invalid_disclosure'],
    ['an element digest beside other keys, in a nested array', async () => [await withSd({ list: [[{ '...': ref(e), x: 1 }]] }, [e]), 'an array element digest at /list/0 has other keys'], 'invalid_disclosure'],
    ['a claim disclosure where an element is', async () => [await withSd({ list: [{ '...': ref(given) }] }, [given]), `disclosure ${ref(given)} of claim given_name is referenced as an array element`], 'invalid_disclosure'],
    ['an element disclosure where a claim is', async () => [await withSd({ _sd: [ref(e)] }, [e]), `array element disclosure ${ref(e)} is referenced from an _sd array`], 'invalid_disclosure'],
    ['a disclosed claim that is also plain, at the root', async () => [await withSd({ _sd: [ref(b64json(['s', 'vct', 'x']))] }, [b64json(['s', 'vct', 'x'])]), 'disclosed claim vct already exists at /'], 'invalid_disclosure'],
    [
      'a disclosed claim that is also plain, in an object',
      async () => [await withSd({ address: { locality: 'Köln', _sd: [ref(b64json(['s', 'locality', 'Bonn']))] } }, [b64json(['s', 'locality', 'Bonn'])]), 'disclosed claim locality already exists at /address'],
      'invalid_disclosure',
    ],
    [
      'a disclosed claim that is also plain, two levels down',
      async () => [await withSd({ address: { geo: { lat: 1, _sd: [ref(b64json(['s', 'lat', 2]))] } } }, [b64json(['s', 'lat', 2])]), 'disclosed claim lat already exists at /address/geo'],
      'invalid_disclosure',
    ],
    ['a registered claim made disclosable', async () => [await withSd({ _sd: [ref(b64json(['s', 'status', {}]))] }, [b64json(['s', 'status', {}])]), 'status must not be selectively disclosable'], 'invalid_disclosure'],
    ['an _sd that is not an array', async () => [await withSd({ address: { _sd: 'x' } }, []), '_sd at /address is not an array'], 'invalid_disclosure'],
    ['an _sd that is not an array, two levels down', async () => [await withSd({ address: { geo: { _sd: 'x' } } }, []), '_sd at /address/geo is not an array'], 'invalid_disclosure'],
    ['a disclosure nothing references', async () => [await withSd({}, [given]), `disclosure ${ref(given)} is referenced by no digest of the credential`], 'unreferenced_disclosure'],
    ['a status list that cannot be read', async () => [await withSd({ status: { status_list: { idx: 3, uri: 'https://down.example/r' } } }, []), 'the credential: connect ETIMEDOUT'], 'status_unavailable'],
    ['a revoked credential', async () => [await withSd({ status: { status_list: { idx: 1, uri: 'https://status.example/detail' } } }, []), 'the credential is revoked'], 'credential_revoked'],
    ['a suspended credential', async () => [await withSd({ status: { status_list: { idx: 2, uri: 'https://status.example/detail' } } }, []), 'the credential is suspended'], 'credential_suspended'],
  ];
  test.each(made)('%s', async (_name, make, reason) => {
    statuses.set('https://status.example/detail#1', 'revoked');
    statuses.set('https://status.example/detail#2', 'suspended');
    const [presentation, detail] = await make();
    await rejects(verify(presentation), reason, detail);
  });

  it("a status checker's own refusal passes through as it is, not as status_unavailable", async () => {
    const refusing = ctx({ status: { ...status, ietf: async () => Promise.reject(new PresentationInvalidError('issuer_unresolvable', 'the list is signed by another issuer')) } });
    const p = await withSd({ status: { status_list: { idx: 1, uri: 'https://status.example/r' } } }, []);
    await expect(verify(p, refusing)).rejects.toMatchObject({ reason: 'issuer_unresolvable', detail: 'the list is signed by another issuer' });
  });

  it('a registered claim name is refused only at the top level: nested, exp and status are ordinary claims', async () => {
    const exp = b64json(['s', 'exp', 5]);
    const st = b64json(['t', 'status', 'ok']);
    const out = await verify(await withSd({ address: { _sd: [ref(exp)] }, list: [{ _sd: [ref(st)] }] }, [exp, st]));
    expect({ claims: { address: out.claims.address, list: out.claims.list }, paths: out.disclosedPaths }).toEqual({
      claims: { address: { exp: 5 }, list: [{ status: 'ok' }] },
      paths: [['address', 'exp'], ['list', 0, 'status']],
    });
  });
});

describe('reconstructClaims (RFC 9901 §7.1 step 3)', () => {
  const dec = (...ds: string[]) => ds.map((d) => decodeDisclosure(d, 'sha256'));

  it('puts disclosed values in place, drops undisclosed digests, _sd and _sd_alg, keeps other claims', () => {
    const a = disclosure('a', 1);
    const e = disclosure({ deep: { _sd: [] } });
    const out = reconstructClaims({ _sd_alg: 'sha-256', _sd: [ref(a), sha('withheld')], n: { _sd_alg: 'kept', arr: [{ '...': ref(e) }, { '...': sha('w') }] } }, dec(a, e));
    expect(out.claims).toEqual({ a: 1, n: { _sd_alg: 'kept', arr: [{ deep: {} }] } });
    expect(out.disclosedPaths).toEqual([['n', 'arr', 0], ['a']]);
  });

  it('refuses a disclosure nothing references, and a {"...": d} element with other keys', () => {
    expect(() => reconstructClaims({ _sd: [] }, dec(disclosure('a', 1)))).toThrow(expect.objectContaining({ reason: 'unreferenced_disclosure' }));
    const e = disclosure(1);
    expect(() => reconstructClaims({ arr: [{ '...': ref(e), x: 1 }] }, dec(e))).toThrow(expect.objectContaining({ reason: 'invalid_disclosure' }));
  });

  it('keeps a claim named __proto__ an own property', () => {
    const p = disclosure('__proto__', { polluted: true });
    const { claims } = reconstructClaims({ _sd: [ref(p)] }, dec(p));
    expect(Object.getPrototypeOf(claims)).toBe(Object.prototype);
    expect(Object.hasOwn(claims, '__proto__')).toBe(true);
  });
});

// ---- credentials from other issuers ------------------------------------------------------------

const rawSigner = (key: Key, kid: string) => ({
  alg: key.alg,
  kid,
  sign: async (d: Uint8Array) => new Uint8Array(key.alg === 'ES256' ? nodeSign('sha256', d, { key: key.privateKey, dsaEncoding: 'ieee-p1363' }) : nodeSign(null, d, key.privateKey)),
});

const pidConfig: IssuableConfiguration = {
  id: 'Pid',
  supportedCredId: 's1',
  format: 'dc+sd-jwt',
  vct: 'urn:eudi:pid:1',
  claims: {},
  sdList: ['/given_name', '/address/street', '/nationalities/1'],
  order: null,
  display: null,
  bindingMethods: null,
  signingAlgs: null,
};

describe('credentials issued by other code', () => {
  it('a credential from our own issuer (formats.ts), bound by cnf.kid and by cnf.jwk', async () => {
    const did = didKey(edHolder);
    for (const holder of [{ jwk: edHolder.jwk as Record<string, unknown>, did, didUrl: vmOf(did) }, { jwk: edHolder.jwk as Record<string, unknown> }]) {
      const credential = await issueSdJwtVc({
        config: pidConfig,
        subject: { given_name: 'Erika', family_name: 'M', address: { street: 'Heidestr.', locality: 'Köln' }, nationalities: ['DE', 'FR'] },
        issuerDid: ED_ISSUER,
        signer: rawSigner(edIssuerKey, ED_ISSUER_KID),
        holder,
        now: new Date(NOW.getTime() - 60_000),
        validitySeconds: 86400,
        status: { sdJwt: { status_list: { idx: 9, uri: 'https://status.example/ours' } } },
      });
      const out = await verify(credential + (await kbJwt(credential, { key: edHolder })));
      expect(out.claims).toMatchObject({ given_name: 'Erika', family_name: 'M', address: { street: 'Heidestr.', locality: 'Köln' }, nationalities: ['DE', 'FR'], vct: 'urn:eudi:pid:1' });
      expect([...out.disclosedPaths].sort()).toEqual([['address', 'street'], ['given_name'], ['nationalities', 1]].sort());
      expect(out.status).toEqual({ value: 0, meaning: 'valid' });
    }
  });

  it('a credential from an independent issuer (@sd-jwt/core SDJwtInstance)', async () => {
    const sdjwt = new SDJwtInstance<Record<string, unknown>>({
      signer: async (data: string) => Buffer.from(await rawSigner(issuerKey, ISSUER_KID).sign(new TextEncoder().encode(data))).toString('base64url'),
      signAlg: 'ES256',
      hasher: (data: string | ArrayBuffer) => new Uint8Array(createHash('sha256').update(typeof data === 'string' ? data : Buffer.from(data)).digest()),
      hashAlg: 'sha-256',
      saltGenerator: () => randomBytes(16).toString('base64url'),
    });
    const credential = await sdjwt.issue(
      { iss: ISSUER, iat: now, vct: 'urn:x', cnf: { jwk: holderKey.jwk }, given_name: 'E', address: { street: 'S', city: 'C' }, degrees: ['a', 'b'] },
      { _sd: ['given_name', 'address'], address: { _sd: ['street'] }, degrees: { _sd: [0] }, _sd_decoy: 2 } as never,
      { header: { typ: 'dc+sd-jwt', kid: ISSUER_KID } },
    );
    const out = await verify(credential + (await kbJwt(credential)));
    expect(out.claims).toMatchObject({ given_name: 'E', address: { street: 'S', city: 'C' }, degrees: ['a', 'b'] });
    expect(out.disclosedPaths).toEqual(expect.arrayContaining([['address'], ['address', 'street'], ['given_name'], ['degrees', 0]]));
  });
});

// ---- jwt_vp_json -------------------------------------------------------------------------------

const holderDid = didKey(edHolder);

async function vcJwt(over: Record<string, unknown> = {}, vcOver: Record<string, unknown> = {}, key: Key = issuerKey, kid = ISSUER_KID) {
  return signJwt(key, { typ: 'JWT', kid }, {
    iss: ISSUER,
    sub: holderDid,
    iat: now - 3600,
    nbf: now - 3600,
    exp: now + 3600,
    jti: 'urn:uuid:1',
    vc: {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      type: ['VerifiableCredential', 'UniversityDegree'],
      issuer: ISSUER,
      credentialSubject: { id: holderDid, degree: 'BSc' },
      credentialStatus: { type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '4', statusListCredential: 'https://status.example/w3c' },
      ...vcOver,
    },
    ...over,
  });
}

async function vpJwt(vcs: unknown[], over: Record<string, unknown> = {}, o: { key?: Key; kid?: string | null; holder?: string } = {}) {
  const holder = o.holder ?? holderDid;
  const kid = o.kid === null ? undefined : (o.kid ?? vmOf(holderDid));
  return signJwt(o.key ?? edHolder, { typ: 'JWT', ...(kid ? { kid } : {}) }, {
    iss: holder,
    aud: AUD,
    nonce: NONCE,
    iat: now - 5,
    vp: { '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiablePresentation'], verifiableCredential: vcs },
    ...over,
  });
}

describe('verifyJwtVpPresentation', () => {
  it('verifies the VP and its VC-JWTs and exposes the claims both ways', async () => {
    const vc = await vcJwt();
    const out = await verifyJwtVpPresentation(await vpJwt([vc]), ctx());
    expect(out.holder).toBe(holderDid);
    expect(out.credentials).toHaveLength(1);
    const c = out.credentials[0]!;
    expect(c).toMatchObject({ format: 'jwt_vc_json', issuer: ISSUER, types: ['VerifiableCredential', 'UniversityDegree'], disclosedPaths: [], holderBound: true, status: { meaning: 'valid' } });
    expect(c.claims).toMatchObject({ iss: ISSUER, sub: holderDid, credentialSubject: { degree: 'BSc' }, vc: { credentialSubject: { degree: 'BSc' } } });
  });

  it('accepts a VP without iat (Credo), a kid fragment, a did:key VP without kid, and a did:web holder via the resolver', async () => {
    const vc = await vcJwt();
    await expect(verifyJwtVpPresentation(await vpJwt([vc], { iat: undefined }), ctx())).resolves.toBeDefined();
    await expect(verifyJwtVpPresentation(await vpJwt([vc], {}, { kid: `#${vmOf(holderDid).split('#')[1]}` }), ctx())).resolves.toBeDefined();
    await expect(verifyJwtVpPresentation(await vpJwt([vc], {}, { kid: null }), ctx())).resolves.toBeDefined();
    const webVc = await vcJwt({ sub: webHolder }, { credentialSubject: { id: webHolder } });
    const out = await verifyJwtVpPresentation(await vpJwt([webVc], {}, { key: webHolderKey, holder: webHolder, kid: `${webHolder}#key-1` }), ctx());
    expect(out.holder).toBe(webHolder);
  });

  it('accepts a credential our issuer (formats.ts) made for a DID holder', async () => {
    const credential = await issueJwtVcJson({
      config: { ...pidConfig, format: 'jwt_vc_json', types: ['VerifiableCredential', 'Pid'], context: ['https://www.w3.org/ns/credentials/v2'], sdList: [] },
      subject: { given_name: 'Erika' },
      issuerDid: ED_ISSUER,
      signer: rawSigner(edIssuerKey, ED_ISSUER_KID),
      holder: { jwk: edHolder.jwk as Record<string, unknown>, did: holderDid, didUrl: vmOf(holderDid) },
      now: new Date(NOW.getTime() - 60_000),
      validitySeconds: 86400,
      status: { w3c: [{ type: 'BitstringStatusListEntry', statusPurpose: 'revocation', statusListIndex: '1', statusListCredential: 'https://status.example/ours' }] },
    });
    const out = await verifyJwtVpPresentation(await vpJwt([credential]), ctx());
    expect(out.credentials[0]).toMatchObject({ issuer: ED_ISSUER, types: ['VerifiableCredential', 'Pid'], claims: { credentialSubject: { given_name: 'Erika', id: holderDid } } });
  });

  it('binds a cnf.jwk credential whose sub is not the holder DID to the key that signed the VP', async () => {
    const vc = await vcJwt({ sub: 'urn:student:42', cnf: { jwk: edHolder.jwk } }, { credentialSubject: { id: 'urn:student:42' } });
    await expect(verifyJwtVpPresentation(await vpJwt([vc]), ctx())).resolves.toBeDefined();
    const other = await vcJwt({ sub: 'urn:student:42', cnf: { jwk: holderKey.jwk } }, { credentialSubject: { id: 'urn:student:42' } });
    await rejects(verifyJwtVpPresentation(await vpJwt([other]), ctx()), 'holder_mismatch');
  });

  it('refuses the VP itself: wrong audience, nonce, stale iat, expired, another key, another DID in kid, malformed', async () => {
    const vc = await vcJwt();
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], { aud: 'x509_san_dns:evil.example' }), ctx()), 'wrong_audience');
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], { nonce: 'old' }), ctx()), 'wrong_nonce');
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], { iat: now - 3600 }), ctx()), 'stale_key_binding');
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], { exp: now - 1 }), ctx()), 'credential_expired');
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], {}, { key: ed25519() }), ctx()), 'invalid_key_binding');
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], {}, { kid: vmOf(didKey(ed25519())) }), ctx()), 'invalid_key_binding');
    await rejects(verifyJwtVpPresentation(await vpJwt([vc], {}, { holder: webHolder, kid: 'did:web:nobody.example#key-1' }), ctx()), 'invalid_key_binding');
    await rejects(verifyJwtVpPresentation('not-a-jwt', ctx()), 'malformed_presentation');
    await rejects(verifyJwtVpPresentation(await signJwt(edHolder, { kid: vmOf(holderDid) }, { iss: holderDid, aud: AUD, nonce: NONCE }), ctx()), 'malformed_presentation');
  });

  it('holder_mismatch: a VC issued to another subject, or vp.holder not the VP iss', async () => {
    const other = didKey(ed25519());
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ sub: other })]), ctx()), 'holder_mismatch');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ sub: undefined }, { credentialSubject: { id: other } })]), ctx()), 'holder_mismatch');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ sub: undefined }, { credentialSubject: { degree: 'x' } })]), ctx()), 'holder_mismatch');
    const vc = await vcJwt();
    const vp = await signJwt(edHolder, { kid: vmOf(holderDid) }, { iss: holderDid, aud: AUD, nonce: NONCE, vp: { holder: other, verifiableCredential: [vc] } });
    await rejects(verifyJwtVpPresentation(vp, ctx()), 'holder_mismatch');
  });

  it('holder binding: every subject of a VC must be the holder, and a VC that names no subject binds to no one', async () => {
    const other = didKey(ed25519());
    const twoSubjects = await vcJwt({ sub: undefined }, { credentialSubject: [{ id: holderDid }, { id: other }] });
    await rejects(verifyJwtVpPresentation(await vpJwt([twoSubjects]), ctx()), 'holder_mismatch');
    const bothHolder = await vcJwt({ sub: undefined }, { credentialSubject: [{ id: holderDid }, { id: holderDid }] });
    await expect(verifyJwtVpPresentation(await vpJwt([bothHolder]), ctx())).resolves.toBeDefined();
    for (const credentialSubject of [undefined, []]) {
      await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ sub: undefined }, { credentialSubject })]), ctx()), 'holder_mismatch');
    }
  });

  it("the VP's iat: within maxIatSkewSeconds either way of now, to the second; nbf up to the clock skew ahead", async () => {
    const vc = await vcJwt();
    for (const iat of [now - 300, now + 300]) await expect(verifyJwtVpPresentation(await vpJwt([vc], { iat }), ctx())).resolves.toBeDefined();
    for (const iat of [now - 301, now + 301, 'now']) await rejects(verifyJwtVpPresentation(await vpJwt([vc], { iat }), ctx()), 'stale_key_binding');
    await expect(verifyJwtVpPresentation(await vpJwt([vc], { nbf: now + CLOCK_SKEW_SECONDS }), ctx())).resolves.toBeDefined();
    for (const nbf of [now + CLOCK_SKEW_SECONDS + 1, 'now']) await rejects(verifyJwtVpPresentation(await vpJwt([vc], { nbf }), ctx()), 'stale_key_binding');
    await expect(verifyJwtVpPresentation(await vpJwt([vc], { exp: now + 1 }), ctx())).resolves.toBeDefined();
    for (const exp of [now, 'later']) await rejects(verifyJwtVpPresentation(await vpJwt([vc], { exp }), ctx()), 'credential_expired');
  });

  it('refuses a VC: embedded object, no vc claim, bad or unresolvable issuer signature, expired, not yet valid', async () => {
    await rejects(verifyJwtVpPresentation(await vpJwt([{ '@context': [], type: ['VerifiableCredential'] }]), ctx()), 'unsupported_format');
    await rejects(verifyJwtVpPresentation(await vpJwt([await signJwt(issuerKey, { kid: ISSUER_KID }, { iss: ISSUER, sub: holderDid })]), ctx()), 'unsupported_format');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({}, {}, otherKey)]), ctx()), 'invalid_issuer_signature');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({}, {}, otherKey, 'did:web:x.example#k')]), ctx()), 'issuer_unresolvable');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ exp: now - 10 })]), ctx()), 'credential_expired');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ exp: undefined }, { validUntil: '2026-03-01T11:00:00Z' })]), ctx()), 'credential_expired');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ exp: undefined }, { expirationDate: '2026-01-01T00:00:00Z' })]), ctx()), 'credential_expired');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({ nbf: now + 3600 })]), ctx()), 'credential_not_yet_valid');
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({}, { validFrom: '2026-03-02T00:00:00Z' })]), ctx()), 'credential_not_yet_valid');
  });

  it('credential_revoked / credential_suspended from each BitstringStatusListEntry', async () => {
    statuses.set('https://status.example/w3c#40', 'revoked');
    statuses.set('https://status.example/w3c#41', 'suspended');
    const entry = (idx: string, statusPurpose: string) => ({ type: 'BitstringStatusListEntry', statusPurpose, statusListIndex: idx, statusListCredential: 'https://status.example/w3c' });
    await rejects(verifyJwtVpPresentation(await vpJwt([await vcJwt({}, { credentialStatus: entry('40', 'revocation') })]), ctx()), 'credential_revoked');
    await rejects(
      verifyJwtVpPresentation(await vpJwt([await vcJwt(), await vcJwt({}, { credentialStatus: [entry('4', 'revocation'), entry('41', 'suspension')] })]), ctx()),
      'credential_suspended',
    );
  });
});

describe('verifyJwtVpPresentation: the detail of each refusal (what the verifier records and shows)', () => {
  const vpPayload = (vcs: unknown[], over: Record<string, unknown> = {}) => ({ iss: holderDid, aud: AUD, nonce: NONCE, vp: { verifiableCredential: vcs }, ...over });
  const vc = () => vcJwt();
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000', '');
  const stranger = ed25519();
  const web = (o: Record<string, unknown> = {}) => vcJwt({ sub: webHolder }, { credentialSubject: { id: webHolder }, ...o });

  const cases: [string, () => Promise<string>, InvalidReason, string][] = [
    ['not a compact JWS', async () => 'not-a-jwt', 'malformed_presentation', 'VP is not a compact JWS'],
    ['no vp claim', async () => signJwt(edHolder, { kid: vmOf(holderDid) }, { iss: holderDid, aud: AUD, nonce: NONCE }), 'malformed_presentation', 'the VP JWT has no vp object'],
    ['vp null', async () => signJwt(edHolder, { kid: vmOf(holderDid) }, { iss: holderDid, aud: AUD, nonce: NONCE, vp: null }), 'malformed_presentation', 'the VP JWT has no vp object'],
    ['vp an array', async () => signJwt(edHolder, { kid: vmOf(holderDid) }, { iss: holderDid, aud: AUD, nonce: NONCE, vp: [await vc()] }), 'malformed_presentation', 'the VP JWT has no vp object'],
    ['iss not a DID', async () => vpJwt([await vc()], { iss: 'https://holder.example' }), 'malformed_presentation', 'the VP names no holder DID (iss)'],
    ['neither iss nor vp.holder', async () => vpJwt([await vc()], { iss: undefined }), 'malformed_presentation', 'the VP names no holder DID (iss)'],
    [
      'vp.holder another DID',
      async () => signJwt(edHolder, { kid: vmOf(holderDid) }, vpPayload([await vc()], { vp: { holder: 'did:web:other.example', verifiableCredential: [await vc()] } })),
      'holder_mismatch',
      `vp.holder did:web:other.example is not the VP iss ${holderDid}`,
    ],
    ['a VP alg not accepted', async () => unsigned({ alg: 'HS256', kid: vmOf(holderDid) }, vpPayload([await vc()])), 'invalid_key_binding', 'VP alg HS256 is not accepted'],
    // Signed by the stranger's own key and naming it: only the kid's DID betrays that it is not the holder's.
    [
      "a kid of another DID, signed by that DID's key",
      async () => vpJwt([await vc()], {}, { key: stranger, kid: vmOf(didKey(stranger)) }),
      'invalid_key_binding',
      `VP kid ${vmOf(didKey(stranger))} is not a key of its holder ${holderDid}`,
    ],
    ['a did:web holder that names no key', async () => vpJwt([await web()], {}, { key: webHolderKey, holder: webHolder, kid: null }), 'invalid_key_binding', 'the VP names no key (kid)'],
    ['signed by another key', async () => vpJwt([await vc()], {}, { key: stranger }), 'invalid_key_binding', `the VP is not signed by a key of ${holderDid}`],
    ['another audience', async () => vpJwt([await vc()], { aud: ['x509_san_dns:evil.example', 7] }), 'wrong_audience', 'VP aud ["x509_san_dns:evil.example",7] is not this verifier'],
    ['no audience', async () => vpJwt([await vc()], { aud: undefined }), 'wrong_audience', 'VP aud undefined is not this verifier'],
    ['another nonce', async () => vpJwt([await vc()], { nonce: 'old' }), 'wrong_nonce', 'the VP nonce is not the request nonce'],
    ['a stale iat', async () => vpJwt([await vc()], { iat: now - 301 }), 'stale_key_binding', `VP iat ${now - 301} is not within 300s of now`],
    ['an nbf ahead', async () => vpJwt([await vc()], { nbf: now + CLOCK_SKEW_SECONDS + 1 }), 'stale_key_binding', `VP not valid before ${now + CLOCK_SKEW_SECONDS + 1}`],
    ['expired', async () => vpJwt([await vc()], { exp: now }), 'credential_expired', `the VP expired at ${now}`],
    [
      'no verifiableCredential',
      async () => signJwt(edHolder, { kid: vmOf(holderDid) }, { iss: holderDid, aud: AUD, nonce: NONCE, vp: { type: ['VerifiablePresentation'] } }),
      'malformed_presentation',
      'the VP has no verifiableCredential',
    ],
    ['an embedded VC', async () => vpJwt([await vc(), { type: ['VerifiableCredential'] }]), 'unsupported_format', 'credential 1 is embedded as an object, not a VC-JWT'],
    ['a VC that is not a JWS', async () => vpJwt([await vc(), 'a.b']), 'malformed_presentation', 'credential 1 is not a compact JWS'],
    ['a JWT with no vc claim', async () => vpJwt([await signJwt(issuerKey, { kid: ISSUER_KID }, { iss: ISSUER, sub: holderDid })]), 'unsupported_format', 'credential 0 is not a VC-JWT (no vc claim)'],
    ['a VC with no issuer', async () => vpJwt([await vcJwt({ iss: undefined }, { issuer: undefined })]), 'malformed_presentation', 'credential 0 has no issuer'],
    ['a VC alg not accepted', async () => vpJwt([unsigned({ alg: 'HS256', kid: ISSUER_KID }, { iss: ISSUER, sub: holderDid, vc: {} })]), 'invalid_issuer_signature', 'credential 0 alg HS256 is not accepted'],
    ['a VC signed by another key', async () => vpJwt([await vcJwt({}, {}, otherKey)]), 'invalid_issuer_signature', `credential 0: the signature of ${ISSUER} does not verify`],
    ['a VC past its exp', async () => vpJwt([await vcJwt({ exp: now })]), 'credential_expired', `credential 0 expired at ${now}`],
    ['a VC at its validUntil', async () => vpJwt([await vcJwt({ exp: undefined }, { validUntil: iso(now) })]), 'credential_expired', `credential 0 expired at ${iso(now)}`],
    ['a VC past its expirationDate', async () => vpJwt([await vcJwt({ exp: undefined }, { expirationDate: '2026-01-01T00:00:00Z' })]), 'credential_expired', 'credential 0 expired at 2026-01-01T00:00:00Z'],
    [
      'a VC whose validFrom is past the skew',
      async () => vpJwt([await vcJwt({}, { validFrom: iso(now + CLOCK_SKEW_SECONDS + 1) })]),
      'credential_not_yet_valid',
      `credential 0 not valid before ${iso(now + CLOCK_SKEW_SECONDS + 1)}`,
    ],
    ['a VC whose issuanceDate is ahead', async () => vpJwt([await vcJwt({}, { issuanceDate: '2026-03-02T00:00:00Z' })]), 'credential_not_yet_valid', 'credential 0 not valid before 2026-03-02T00:00:00Z'],
    ['a validUntil that is no date', async () => vpJwt([await vcJwt({}, { validUntil: 'soon' })]), 'malformed_presentation', 'credential 0 vc.validUntil is not a date-time'],
    ['a validFrom that is a number', async () => vpJwt([await vcJwt({}, { validFrom: now })]), 'malformed_presentation', 'credential 0 vc.validFrom is not a date-time'],
    ['a VC issued to someone else', async () => vpJwt([await vcJwt({ sub: didKey(stranger) })]), 'holder_mismatch', `credential 0 was not issued to ${holderDid}`],
    // A cnf.jwk that is no key (no thumbprint can be computed) binds to no one.
    ['a VC bound to a cnf.jwk that is no key', async () => vpJwt([await vcJwt({ sub: 'urn:student:42', cnf: { jwk: { kty: 'EC' } } }, { credentialSubject: { id: 'urn:student:42' } })]), 'holder_mismatch', `credential 0 was not issued to ${holderDid}`],
    ['a credentialStatus that is no object', async () => vpJwt([await vcJwt({}, { credentialStatus: ['x'] })]), 'malformed_presentation', 'credential 0 credentialStatus is not an object'],
  ];
  test.each(cases)('%s', async (_name, make, reason, detail) => rejects(verifyJwtVpPresentation(await make(), ctx()), reason, detail));

  it('accepts what the refusals above are the other side of', async () => {
    const ok = async (vp: string) => verifyJwtVpPresentation(vp, ctx());
    // the holder from vp.holder (string or {id}) when there is no iss, or both agreeing
    for (const holder of [holderDid, { id: holderDid }]) {
      await expect(ok(await signJwt(edHolder, { kid: vmOf(holderDid) }, { aud: AUD, nonce: NONCE, vp: { holder, verifiableCredential: [await vc()] } }))).resolves.toMatchObject({ holder: holderDid });
      await expect(ok(await signJwt(edHolder, { kid: vmOf(holderDid) }, vpPayload([], { vp: { holder, verifiableCredential: [await vc()] } })))).resolves.toMatchObject({ holder: holderDid });
    }
    // a did:jwk holder, like did:key, may name no kid (its document has one key)
    const jwkHolder = ed25519();
    const jwkDid = didJwk(jwkHolder);
    const jwkVc = await vcJwt({ sub: jwkDid }, { credentialSubject: { id: jwkDid } });
    await expect(ok(await vpJwt([jwkVc], {}, { key: jwkHolder, holder: jwkDid, kid: null }))).resolves.toMatchObject({ holder: jwkDid });
    // one of several audiences is enough; a single string is one audience
    await expect(ok(await vpJwt([await vc()], { aud: ['x509_san_dns:other.example', AUD] }))).resolves.toBeDefined();
    await expect(ok(await vpJwt([await vc()], { aud: 'verifier.example' }))).resolves.toBeDefined();
    // validUntil one second ahead; validFrom at the edge of the skew
    await expect(ok(await vpJwt([await vcJwt({ exp: undefined }, { validUntil: iso(now + 1) })]))).resolves.toBeDefined();
    await expect(ok(await vpJwt([await vcJwt({}, { validFrom: iso(now + CLOCK_SKEW_SECONDS) })]))).resolves.toBeDefined();
    // no credentialStatus: no status, and no refusal; a status entry of another kind is not read
    const plain = await ok(await vpJwt([await vcJwt({}, { credentialStatus: undefined })]));
    expect(plain.credentials[0]!.status).toBeUndefined();
    const other = await ok(await vpJwt([await vcJwt({}, { credentialStatus: { type: 'StatusList2021Entry', statusListIndex: '9', statusListCredential: 'https://status.example/w3c' } })]));
    expect(other.credentials[0]!.status).toBeUndefined();
    // types keep only strings
    const typed = await ok(await vpJwt([await vcJwt({}, { type: ['VerifiableCredential', 7, 'Degree'] })]));
    expect(typed.credentials[0]!.types).toEqual(['VerifiableCredential', 'Degree']);
  });

  it('of several BitstringStatusListEntry answers, the first that is not valid wins', async () => {
    // Entries from 80 on answer 'other' with their index as the value, so two of them can be told apart.
    const messages = ctx({ status: { ...status, w3c: async (e, o) => (Number(e.statusListIndex) >= 80 ? { value: Number(e.statusListIndex), meaning: 'other' } : status.w3c(e, o)) } });
    const entry = (idx: string) => ({ type: 'BitstringStatusListEntry', statusPurpose: 'message', statusListIndex: idx, statusListCredential: 'https://status.example/w3c' });
    for (const [order, value] of [[['71', '80'], 80], [['80', '71'], 80], [['81', '80', '71'], 81], [['71', '80', '81'], 80]] as const) {
      const out = await verifyJwtVpPresentation(await vpJwt([await vcJwt({}, { credentialStatus: order.map(entry) })]), messages);
      expect({ order, status: out.credentials[0]!.status }).toEqual({ order, status: { value, meaning: 'other' } });
    }
    statuses.set('https://status.example/w3c#72', 'revoked');
    await expect(verifyJwtVpPresentation(await vpJwt([await vcJwt({}, { credentialStatus: [entry('71'), entry('72')] })]), ctx())).rejects.toMatchObject({ reason: 'credential_revoked', detail: 'credential 0 is revoked' });
  });
});
