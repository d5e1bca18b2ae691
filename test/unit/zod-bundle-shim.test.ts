import * as zod from 'zod';
import * as zodCore from 'zod/v4/core';
import * as entry from '../../functions/shared/zod-bundle-entry';
import * as core from '../../functions/shared/zod-core-exports';

/**
 * The bundles replace `zod` with a copy of its entry that leaves out the locales (BUNDLE_ALIASES):
 * if a zod upgrade adds an export, the copy must follow, or a library would find it missing.
 */
describe('the zod the Lambda bundles use', () => {
  it('exports everything zod exports except the locales, and the same values', () => {
    const expected = Object.keys(zod).filter((k) => k !== 'locales').sort();
    expect(Object.keys(entry).filter((k) => k !== 'default' && k !== 'z').sort()).toEqual(expected.filter((k) => k !== 'default' && k !== 'z'));
    for (const k of expected) if (k !== 'core' && k !== 'default' && k !== 'z') expect([k, (entry as Record<string, unknown>)[k]]).toEqual([k, (zod as Record<string, unknown>)[k]]);
    expect(entry.default).toBe(entry.z);
  });

  it("keeps zod's core, without its locales", () => {
    expect(Object.keys(core).sort()).toEqual(Object.keys(zodCore).filter((k) => k !== 'locales').sort());
    expect(Object.keys(entry.core).sort()).toEqual(Object.keys(core).sort());
  });

  it('still validates, with the English messages registered by the schemas themselves', () => {
    const r = entry.z.object({ a: entry.z.string() }).safeParse({ a: 1 });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toMatch(/expected string/i);
  });
});
