import { build } from 'esbuild';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isOwnSource, trimSourceMap, type SourceMapV3 } from '../../infra/constructs/trim-source-map';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A minified bundle, built the way the functions are: our code, then dependencies (zod, ulid), then our code. */
async function bundle(): Promise<{ code: string; map: SourceMapV3 }> {
  const r = await build({
    stdin: {
      contents: `
        import { keys } from './lib/store/keys';
        import * as z from 'zod';
        import { ulid } from 'ulid';
        export function handler(input) { return [z.object({ a: z.string() }).parse(input), ulid(), keys]; }`,
      resolveDir: ROOT,
      sourcefile: 'entry.ts',
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    sourcemap: 'external',
    sourcesContent: false,
    outfile: join(ROOT, 'out.mjs'),
    write: false,
  });
  const text = (suffix: string) => r.outputFiles.find((f) => f.path.endsWith(suffix))!.text;
  return { code: text('.mjs'), map: JSON.parse(text('.mjs.map')) };
}

describe('trimSourceMap', () => {
  test('our files stay mapped exactly as before; positions in dependencies become unmapped, not mis-mapped', async () => {
    const { code, map } = await bundle();
    const trimmed = trimSourceMap(map);
    expect(map.sources.some((s) => !isOwnSource(s))).toBe(true);
    expect(trimmed.sources.length).toBeGreaterThan(0);
    expect(trimmed.sources.every(isOwnSource)).toBe(true);
    expect(trimmed.mappings.length).toBeLessThan(map.mappings.length / 5);

    const full = new SourceMap(map as never); // node:module types want file and sourceRoot, which esbuild omits
    const lean = new SourceMap(trimmed as never);
    let own = 0;
    let dependency = 0;
    code.split('\n').forEach((line, l) => {
      for (let c = 0; c <= line.length; c++) {
        const before = full.findEntry(l, c) as { originalSource?: string };
        const after = lean.findEntry(l, c) as { originalSource?: string };
        if (before.originalSource && isOwnSource(before.originalSource)) {
          own++;
          expect(after).toEqual(before);
        } else {
          dependency++;
          expect(after.originalSource).toBeUndefined();
        }
      }
    });
    expect(own).toBeGreaterThan(100);
    expect(dependency).toBeGreaterThan(own);
  });

  test('a map of our files only comes out unchanged', () => {
    const map: SourceMapV3 = { version: 3, sources: ['../lib/a.ts', '../lib/b.ts'], names: ['x', 'y'], mappings: 'AAAA,CAACA,EAAC;ACAA,kBAAgCC' };
    expect(trimSourceMap(map)).toEqual(map);
  });
});
