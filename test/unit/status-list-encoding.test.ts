import { randomInt } from 'node:crypto';
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { StatusList } from '@sd-jwt/jwt-status-list';
import { ietfStatusList, STATUS_SIZES, w3cEncodedList, type StatusSize } from '../../lib/status-lists/encoding';
import { BitstringStatusListError, decodeBitstringStatusList } from '../helpers/w3c-bitstring-status-list';

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

describe('speed', () => {
  it('a fully set 131,072-entry 8-bit list is built and compressed in well under 100 ms, both formats', () => {
    const entries = Array.from({ length: LIST_SIZE }, (_, i) => [i, randomInt(1, 256)] as const);
    const shape = { listSize: LIST_SIZE, statusSize: 8 } as const;
    const best = (fn: () => unknown) => Math.min(...[0, 1, 2].map(() => { const t = performance.now(); fn(); return performance.now() - t; }));
    expect(best(() => w3cEncodedList(shape, entries))).toBeLessThan(100);
    expect(best(() => ietfStatusList(shape, entries))).toBeLessThan(100);
  });
});
