/**
 * Keeps only the project's own files in a bundle's source map: mappings into node_modules become
 * "unmapped" segments. Node decodes every mapping of a map at the first stack trace that touches the
 * bundle (~50 ms for the full map of an SDK-sized bundle); our own files are a few percent of them.
 * Frames in dependencies then show their position in index.mjs instead of a wrong source.
 *
 * Run by ServiceFunction after esbuild (`node trim-source-map.ts <index.mjs.map>`; Node 22 strips the
 * types), so erasable TypeScript only and no imports but Node's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface SourceMapV3 {
  version: number;
  sources: string[];
  names: string[];
  mappings: string;
  sourcesContent?: (string | null)[];
  [key: string]: unknown;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...B64].map((c, i) => [c, i]));

function decodeSegment(segment: string): number[] {
  const fields: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of segment) {
    const digit = DIGIT.get(c);
    if (digit === undefined) throw new Error(`invalid base64 VLQ digit ${c}`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) {
      shift += 5;
    } else {
      fields.push(value % 2 ? -(value - 1) / 2 : value / 2);
      value = 0;
      shift = 0;
    }
  }
  return fields;
}

function encode(n: number): string {
  let v = n < 0 ? -n * 2 + 1 : n * 2;
  let out = '';
  do {
    let digit = v % 32;
    v = Math.floor(v / 32);
    if (v > 0) digit |= 32;
    out += B64[digit];
  } while (v > 0);
  return out;
}

export const isOwnSource = (source: string) => !/(^|\/)node_modules\//.test(source);

export function trimSourceMap(map: SourceMapV3, keep: (source: string) => boolean = isOwnSource): SourceMapV3 {
  // Absolute state of the input, and of what was written (fields are deltas to the previous segment).
  let src = 0, line = 0, col = 0, name = 0;
  let outSrc = 0, outLine = 0, outCol = 0, outName = 0;
  const sourceIndex = new Map<number, number>();
  const nameIndex = new Map<number, number>();
  const sources: string[] = [];
  const names: string[] = [];
  const contents: (string | null)[] = [];
  // Whether the last segment written is an unmapped one: a run of dropped segments needs only one.
  let unmapped = true;
  const lines = map.mappings.split(';').map((text) => {
    let genCol = 0;
    let outGenCol = 0;
    const out: string[] = [];
    for (const segment of text ? text.split(',') : []) {
      const f = decodeSegment(segment);
      genCol += f[0]!;
      let kept = false;
      if (f.length >= 4) {
        src += f[1]!;
        line += f[2]!;
        col += f[3]!;
        if (f.length >= 5) name += f[4]!;
        kept = keep(map.sources[src] ?? '');
      }
      if (!kept) {
        if (!unmapped) {
          out.push(encode(genCol - outGenCol));
          outGenCol = genCol;
          unmapped = true;
        }
        continue;
      }
      if (!sourceIndex.has(src)) {
        sourceIndex.set(src, sources.length);
        sources.push(map.sources[src]!);
        contents.push(map.sourcesContent?.[src] ?? null);
      }
      const s = sourceIndex.get(src)!;
      let encoded = encode(genCol - outGenCol) + encode(s - outSrc) + encode(line - outLine) + encode(col - outCol);
      outGenCol = genCol;
      outSrc = s;
      outLine = line;
      outCol = col;
      if (f.length >= 5) {
        if (!nameIndex.has(name)) {
          nameIndex.set(name, names.length);
          names.push(map.names[name]!);
        }
        const n = nameIndex.get(name)!;
        encoded += encode(n - outName);
        outName = n;
      }
      out.push(encoded);
      unmapped = false;
    }
    return out.join(',');
  });
  const { sourcesContent, ...rest } = map;
  return { ...rest, sources, names, mappings: lines.join(';'), ...(sourcesContent ? { sourcesContent: contents } : {}) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of process.argv.slice(2)) {
    writeFileSync(file, JSON.stringify(trimSourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapV3)));
  }
}
