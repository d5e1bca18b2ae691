import { randomInt } from 'node:crypto';
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { getListFromStatusListJWT, StatusList } from '@sd-jwt/jwt-status-list';
import { compactVerify, importJWK } from 'jose';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import type { KeyAlg } from '../../lib/keys/port';
import { issuerSigner } from '../../lib/keys/signer';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { ietfStatusList, STATUS_SIZES, w3cEncodedList, type StatusSize } from '../../lib/status-lists/encoding';
import { ietfStatusClaim, signIetfStatusListToken, signW3cStatusListCredential, w3cStatusEntry, type PublicationInput } from '../../lib/status-lists/tokens';
import { tenantScope } from '../../lib/store/keys';
import { BitstringStatusListError, decodeBitstringStatusList } from '../helpers/w3c-bitstring-status-list';
import { MemoryStore } from '../helpers/memory-store';
import { Bitstring } from '@digitalbazaar/bitstring';

const LIST_SIZE = 131_072;

/** 1 % of the list set to random non-zero values, as an index → value map and a dense array. */
function randomEntries(statusSize: StatusSize, listSize = LIST_SIZE) {
  const entries = new Map<number, number>();
  while (entries.size < Math.round(listSize / 100)) entries.set(randomInt(listSize), randomInt(1, 2 ** statusSize));
  const dense = new Uint8Array(listSize);
  for (const [i, v] of entries) dense[i] = v;
  return { entries, dense };
}

/** Indexes where a reader disagrees with the expected list (the first few, to keep a failure readable). */
function mismatches(expected: Uint8Array, read: (i: number) => number): { index: number; expected: number; read: number }[] {
  const out = [];
  for (let i = 0; i < expected.length && out.length < 5; i++) {
    const r = read(i);
    if (r !== expected[i]) out.push({ index: i, expected: expected[i]!, read: r });
  }
  return out;
}

const inflateIetf = (lst: string) => new Uint8Array(inflateSync(Buffer.from(lst, 'base64url')));
const gunzipW3c = (encodedList: string) => new Uint8Array(gunzipSync(Buffer.from(encodedList.slice(1), 'base64url')));

describe('bit positions: each format puts index 0 where its specification says', () => {
  it('1-bit, only index 0 set: W3C first byte 0x80 (left-most bit), IETF first byte 0x01 (least significant bit)', () => {
    const w3c = gunzipW3c(w3cEncodedList({ listSize: LIST_SIZE, statusSize: 1 }, [[0, 1]]));
    expect(w3c.length).toBe(16_384);
    expect(w3c[0]).toBe(0x80);
    expect(w3c.subarray(1).every((b) => b === 0)).toBe(true);
    const ietf = inflateIetf(ietfStatusList({ listSize: LIST_SIZE, statusSize: 1 }, [[0, 1]]).lst);
    expect(ietf.length).toBe(16_384);
    expect(ietf[0]).toBe(0x01);
    expect(ietf.subarray(1).every((b) => b === 0)).toBe(true);
  });

  it('2-bit, index 1 = 0b10: W3C bits 2..3 from the left read 1,0 (0x20); IETF bits 2..3 hold the integer 2 (0x08)', () => {
    expect(gunzipW3c(w3cEncodedList({ listSize: LIST_SIZE, statusSize: 2 }, [[1, 0b10]]))[0]).toBe(0b0010_0000);
    expect(inflateIetf(ietfStatusList({ listSize: LIST_SIZE, statusSize: 2 }, [[1, 0b10]]).lst)[0]).toBe(0b0000_1000);
  });

  it('4-bit, index 1 = 0x5 and index 2 = 0xc: W3C 0x05 0xc0, IETF 0x50 0x0c; 8-bit: one byte per status in both', () => {
    const four = [[1, 0x5], [2, 0xc]] as const;
    expect([...gunzipW3c(w3cEncodedList({ listSize: LIST_SIZE, statusSize: 4 }, four)).subarray(0, 2)]).toEqual([0x05, 0xc0]);
    expect([...inflateIetf(ietfStatusList({ listSize: LIST_SIZE, statusSize: 4 }, four).lst).subarray(0, 2)]).toEqual([0x50, 0x0c]);
    const eight = [[1, 0xa7]] as const;
    expect([...gunzipW3c(w3cEncodedList({ listSize: LIST_SIZE, statusSize: 8 }, eight)).subarray(0, 2)]).toEqual([0x00, 0xa7]);
    expect([...inflateIetf(ietfStatusList({ listSize: LIST_SIZE, statusSize: 8 }, eight).lst).subarray(0, 2)]).toEqual([0x00, 0xa7]);
  });

  it("IETF: the draft's example lists give its bytes (1-bit: b9 a3; 2-bit: c9 44 f9)", () => {
    const one = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1];
    const two = [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3];
    const nonZero = (list: number[]) => list.flatMap((v, i) => (v ? [[i, v] as const] : []));
    expect([...inflateIetf(ietfStatusList({ listSize: one.length, statusSize: 1 }, nonZero(one)).lst)]).toEqual([0xb9, 0xa3]);
    expect([...inflateIetf(ietfStatusList({ listSize: two.length, statusSize: 2 }, nonZero(two)).lst)]).toEqual([0xc9, 0x44, 0xf9]);
  });

  it('IETF is DEFLATE in the ZLIB format (RFC 1950 header), W3C is GZIP (RFC 1952 magic), multibase prefix u', () => {
    const z = Buffer.from(ietfStatusList({ listSize: 8, statusSize: 1 }, []).lst, 'base64url');
    expect(z[0]! & 0x0f).toBe(8); // CM = deflate
    expect((z[0]! * 256 + z[1]!) % 31).toBe(0); // FCHECK
    const encoded = w3cEncodedList({ listSize: LIST_SIZE, statusSize: 1 }, []);
    expect(encoded).toMatch(/^u[A-Za-z0-9_-]+$/);
    expect([...Buffer.from(encoded.slice(1), 'base64url').subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  });
});

describe("Digital Bazaar's bitstring library (the W3C editors' implementation) agrees, with bits set", () => {
  test('our W3C encodedList reads back bit for bit in @digitalbazaar/bitstring; its lists read back in our spec-only reader', async () => {
    const { entries, dense } = randomEntries(1);
    const ours = w3cEncodedList({ listSize: LIST_SIZE, statusSize: 1 }, entries);
    expect(ours.startsWith('u')).toBe(true);
    const theirs = new Bitstring({ buffer: await Bitstring.decodeBits({ encoded: ours.slice(1) }) });
    expect(theirs.length).toBe(LIST_SIZE);
    expect(mismatches(dense, (i) => Number(theirs.get(i)))).toEqual([]);

    const made = new Bitstring({ length: LIST_SIZE });
    for (const i of entries.keys()) made.set(i, true);
    const reader = decodeBitstringStatusList(`u${await made.encodeBits()}`, 1);
    expect(mismatches(dense, (i) => reader.status(i))).toEqual([]);
  });
});

describe('the W3C reader in test/helpers follows the specification', () => {
  it("reads the specification's own example encodedList: 131,072 statuses, all 0", () => {
    const list = decodeBitstringStatusList('uH4sIAAAAAAAAA-3BMQEAAADCoPVPbQwfoAAAAAAAAAAAAAAAAAAAAIC3AYbSVKsAQAAA');
    expect(list.entries).toBe(LIST_SIZE);
    expect(mismatches(new Uint8Array(LIST_SIZE), list.status)).toEqual([]);
  });

  it('refuses a bitstring of fewer than 131,072 statuses (STATUS_LIST_LENGTH_ERROR) and an index outside it (RANGE_ERROR)', () => {
    const short = `u${gzipSync(new Uint8Array(8192)).toString('base64url')}`;
    expect(() => decodeBitstringStatusList(short)).toThrow(expect.objectContaining({ code: 'STATUS_LIST_LENGTH_ERROR' }));
    // 16 KB holds 131,072 1-bit statuses but only 65,536 2-bit ones.
    const oneBitSized = w3cEncodedList({ listSize: LIST_SIZE, statusSize: 1 }, []);
    expect(() => decodeBitstringStatusList(oneBitSized, 2)).toThrow(BitstringStatusListError);
    expect(() => decodeBitstringStatusList(oneBitSized).status(LIST_SIZE)).toThrow(expect.objectContaining({ code: 'RANGE_ERROR' }));
  });
});

describe.each(STATUS_SIZES)('a %i-bit list of 131,072 statuses, 1 % set to random values, reads back through independent readers', (statusSize) => {
  const { entries, dense } = randomEntries(statusSize);
  const shape = { listSize: LIST_SIZE, statusSize };

  it('W3C encodedList, read by the specification-only helper: every index', () => {
    const list = decodeBitstringStatusList(w3cEncodedList(shape, entries), statusSize);
    expect(list.entries).toBe(LIST_SIZE);
    expect(mismatches(dense, list.status)).toEqual([]);
  });

  it('IETF lst, read by @sd-jwt/jwt-status-list (pako): every index', () => {
    const { bits, lst } = ietfStatusList(shape, entries);
    expect(bits).toBe(statusSize);
    const list = StatusList.decompressStatusList(lst, bits);
    expect(list.statusList.length).toBe(LIST_SIZE);
    expect(mismatches(dense, (i) => list.getStatus(i))).toEqual([]);
  });
});

describe('lists shorter than the W3C minimum', () => {
  it('W3C pads to 131,072 statuses of statusSize bits; IETF keeps the list size (rounded up to a byte)', () => {
    const w3c = decodeBitstringStatusList(w3cEncodedList({ listSize: 1000, statusSize: 4 }, [[999, 9]]), 4);
    expect(w3c.entries).toBe(LIST_SIZE);
    expect([w3c.status(998), w3c.status(999), w3c.status(LIST_SIZE - 1)]).toEqual([0, 9, 0]);
    expect(inflateIetf(ietfStatusList({ listSize: 1001, statusSize: 1 }, [[1000, 1]]).lst)).toEqual(new Uint8Array([...new Uint8Array(125), 0x01]));
  });
});

describe('bad input is refused with a RangeError', () => {
  const cases: [string, { listSize: number; statusSize: StatusSize }, [number, number][]][] = [
    ['index -1', { listSize: 16, statusSize: 1 }, [[-1, 1]]],
    ['index = listSize', { listSize: 16, statusSize: 1 }, [[16, 1]]],
    ['a fractional index', { listSize: 16, statusSize: 1 }, [[1.5, 1]]],
    ['value 0 (unset statuses are not listed)', { listSize: 16, statusSize: 2 }, [[1, 0]]],
    ['value 2 in a 1-bit list', { listSize: 16, statusSize: 1 }, [[1, 2]]],
    ['value 4 in a 2-bit list', { listSize: 16, statusSize: 2 }, [[1, 4]]],
    ['value 256 in an 8-bit list', { listSize: 16, statusSize: 8 }, [[1, 256]]],
    ['a negative value', { listSize: 16, statusSize: 8 }, [[1, -1]]],
    ['statusSize 3', { listSize: 16, statusSize: 3 as StatusSize }, []],
    ['listSize 0', { listSize: 0, statusSize: 1 }, []],
  ];
  it.each(cases)('%s', (_, shape, entries) => {
    expect(() => w3cEncodedList(shape, entries)).toThrow(RangeError);
    expect(() => ietfStatusList(shape, entries)).toThrow(RangeError);
  });

  it('an index listed twice keeps its last value', () => {
    const list = StatusList.decompressStatusList(ietfStatusList({ listSize: 8, statusSize: 2 }, [[3, 3], [3, 1]]).lst, 2);
    expect(list.getStatus(3)).toBe(1);
    expect(decodeBitstringStatusList(w3cEncodedList({ listSize: 8, statusSize: 2 }, [[3, 3], [3, 1]]), 2).status(3)).toBe(1);
  });
});

describe.each(['ES256', 'EdDSA'] as const)('signed publications (%s key, local key manager), verified with jose', (alg: KeyAlg) => {
  const scope = tenantScope('1');
  const km = new LocalKeyManager(new MemoryStore(), new LocalSecretDeriver('ab'.repeat(32)));
  const kid = 'did:example:issuer#key-1';
  const url = 'https://status.example.com/w/1/lists/7';
  const { entries, dense } = randomEntries(2);
  const input: PublicationInput = {
    url,
    issuer: 'did:example:issuer',
    purpose: 'suspension',
    listSize: LIST_SIZE,
    statusSize: 2,
    entries,
    issuedAt: new Date('2026-11-23T12:00:00.750Z'),
    expiresAt: new Date('2026-11-24T12:00:00Z'),
    ttlSeconds: 300,
  };
  const iat = Date.parse('2026-11-23T12:00:00Z') / 1000;
  const exp = Date.parse('2026-11-24T12:00:00Z') / 1000;

  async function keyAndSigner() {
    const key = await km.create(scope, alg);
    return { signer: issuerSigner(km, scope, { ref: key.ref, alg }, kid), publicKey: await importJWK(key.publicJwk as never, alg) };
  }

  async function verify(jws: string, publicKey: Awaited<ReturnType<typeof importJWK>>) {
    const { protectedHeader, payload } = await compactVerify(jws, publicKey);
    return { header: protectedHeader, payload: JSON.parse(new TextDecoder().decode(payload)) as Record<string, any> };
  }

  it('IETF statuslist+jwt: header, claims, and a list @sd-jwt/jwt-status-list reads back', async () => {
    const { signer, publicKey } = await keyAndSigner();
    const token = await signIetfStatusListToken(input, signer);
    const { header, payload } = await verify(token, publicKey);
    expect(header).toEqual({ typ: 'statuslist+jwt', alg, kid });
    expect(payload).toEqual({ iss: 'did:example:issuer', sub: url, iat, exp, ttl: 300, status_list: { bits: 2, lst: expect.any(String) } });
    const list = getListFromStatusListJWT(token);
    expect(list.getBitsPerStatus()).toBe(2);
    expect(mismatches(dense, (i) => list.getStatus(i))).toEqual([]);
  });

  it('W3C BitstringStatusListCredential as vc+jwt: header, the credential, JWT claims, and a list the helper reads back', async () => {
    const { signer, publicKey } = await keyAndSigner();
    const token = await signW3cStatusListCredential(input, signer);
    const { header, payload } = await verify(token, publicKey);
    expect(header).toEqual({ typ: 'vc+jwt', cty: 'vc', alg, kid });
    expect(payload).toEqual({
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      id: url,
      type: ['VerifiableCredential', 'BitstringStatusListCredential'],
      issuer: 'did:example:issuer',
      validFrom: '2026-11-23T12:00:00.000Z',
      validUntil: '2026-11-24T12:00:00.000Z',
      credentialSubject: {
        id: `${url}#list`,
        type: 'BitstringStatusList',
        statusPurpose: 'suspension',
        encodedList: expect.stringMatching(/^u/),
        ttl: 300_000,
        statusSize: 2,
      },
      iss: 'did:example:issuer',
      iat,
      exp,
      jti: expect.stringMatching(/^urn:uuid:[0-9a-f-]{36}$/),
    });
    const list = decodeBitstringStatusList(payload.credentialSubject.encodedList, 2);
    expect(mismatches(dense, list.status)).toEqual([]);
  });

  it('a token whose payload was altered no longer verifies (the signature covers the list)', async () => {
    const { signer, publicKey } = await keyAndSigner();
    const [h, p, s] = (await signIetfStatusListToken(input, signer)).split('.');
    const altered = JSON.parse(Buffer.from(p!, 'base64url').toString());
    altered.status_list.lst = ietfStatusList({ listSize: LIST_SIZE, statusSize: 2 }, []).lst;
    await expect(compactVerify(`${h}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${s}`, publicKey)).rejects.toThrow();
  });
});

describe('publication input checks', () => {
  const signer = { alg: 'EdDSA' as const, kid: 'k', sign: async () => new Uint8Array(64) };
  const base: PublicationInput = {
    url: 'https://status.example.com/l/1',
    issuer: 'did:example:1',
    purpose: 'revocation',
    listSize: LIST_SIZE,
    statusSize: 1,
    entries: [],
    issuedAt: new Date('2026-11-23T12:00:00Z'),
    expiresAt: new Date('2026-11-23T13:00:00Z'),
    ttlSeconds: 60,
  };
  it.each([
    ['expiresAt before issuedAt', { expiresAt: new Date('2026-11-23T11:00:00Z') }],
    ['an invalid date', { issuedAt: new Date('nope') }],
    ['ttl 0', { ttlSeconds: 0 }],
    ['a fractional ttl', { ttlSeconds: 1.5 }],
  ])('%s is refused by both', async (_, change) => {
    await expect(signIetfStatusListToken({ ...base, ...change }, signer)).rejects.toThrow(RangeError);
    await expect(signW3cStatusListCredential({ ...base, ...change }, signer)).rejects.toThrow(RangeError);
  });

  it('W3C purpose "message" needs statusMessage, and then carries statusSize and the messages on the list', async () => {
    await expect(signW3cStatusListCredential({ ...base, purpose: 'message', statusSize: 2 }, signer)).rejects.toThrow(TypeError);
    const statusMessage = ['pending', 'accepted', 'rejected', 'undefined'].map((message, v) => ({ status: `0x${v.toString(16)}`, message }));
    const jws = await signW3cStatusListCredential({ ...base, purpose: 'message', statusSize: 2, statusMessage }, signer);
    const subject = JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).credentialSubject;
    expect(subject).toMatchObject({ statusPurpose: 'message', statusSize: 2, statusMessage });
  });

  it('a 1-bit W3C list leaves statusSize out (1 is the default)', async () => {
    const jws = await signW3cStatusListCredential(base, signer);
    expect(JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).credentialSubject).not.toHaveProperty('statusSize');
  });
});

describe('what an issued credential carries', () => {
  const url = 'https://status.example.com/w/1/lists/7';

  it('IETF: {status_list: {idx, uri}}', () => {
    expect(ietfStatusClaim(url, 94567)).toEqual({ status_list: { idx: 94567, uri: url } });
    expect(() => ietfStatusClaim(url, -1)).toThrow(RangeError);
  });

  it('W3C 1-bit entry: statusListIndex as a base-10 string, id distinct from the list URL, no statusSize', () => {
    expect(w3cStatusEntry({ url, index: 94567, purpose: 'revocation', statusSize: 1 })).toEqual({
      id: `${url}#94567`,
      type: 'BitstringStatusListEntry',
      statusPurpose: 'revocation',
      statusListIndex: '94567',
      statusListCredential: url,
    });
  });

  it('W3C multi-bit entry: statusSize and one statusMessage per value, status as 0x-prefixed hexadecimal', () => {
    const statusMessage = ['valid', 'revoked', 'suspended', 'undefined'].map((message, v) => ({ status: `0x${v.toString(16)}`, message }));
    expect(w3cStatusEntry({ url, index: 5, purpose: 'message', statusSize: 2, statusMessage })).toEqual({
      id: `${url}#5`,
      type: 'BitstringStatusListEntry',
      statusPurpose: 'message',
      statusListIndex: '5',
      statusListCredential: url,
      statusSize: 2,
      statusMessage,
    });
    // The text requires the messages above 1 bit, exactly 2**statusSize of them, each value once.
    expect(() => w3cStatusEntry({ url, index: 5, purpose: 'message', statusSize: 2 })).toThrow(TypeError);
    expect(() => w3cStatusEntry({ url, index: 5, purpose: 'message', statusSize: 2, statusMessage: statusMessage.slice(1) })).toThrow(RangeError);
    expect(() => w3cStatusEntry({ url, index: 5, purpose: 'message', statusSize: 2, statusMessage: [...statusMessage.slice(1), statusMessage[1]!] })).toThrow(RangeError);
    expect(() => w3cStatusEntry({ url, index: 5, purpose: 'message', statusSize: 2, statusMessage: statusMessage.map((m, v) => ({ ...m, status: String(v) })) })).toThrow(RangeError);
    expect(() => w3cStatusEntry({ url, index: -1, purpose: 'revocation', statusSize: 1 })).toThrow(RangeError);
  });
});
