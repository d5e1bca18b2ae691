/**
 * The JSONPath subset this service evaluates in presentation definitions: `$`, `.name`, `['name']`,
 * `["name"]`, `[index]`, `[*]` and `.*`. Filters, recursive descent, slices and unions are refused at
 * validation, so matching never meets a path it cannot evaluate exactly.
 */

export type PathSegment = { readonly key: string } | { readonly index: number } | { readonly wildcard: true };

export type ParsedPath = { readonly ok: true; readonly segments: readonly PathSegment[] } | { readonly ok: false; readonly message: string };

const MEMBER = /^[\p{L}\p{N}_$@-]+/u;
const SINGLE_QUOTED = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/;
const DOUBLE_QUOTED = /^\[\s*"((?:[^"\\]|\\.)*)"\s*\]/;
const INDEX = /^\[\s*(\d+)\s*\]/;
const WILDCARD = /^\[\s*\*\s*\]/;

const unsupported = (what: string): ParsedPath => ({
  ok: false,
  message: `uses ${what}, which this service does not evaluate (supported: $.name, $['name'], [index], [*])`,
});

export function parseJsonPath(path: string): ParsedPath {
  if (!path.startsWith('$')) return { ok: false, message: 'must be a JSONPath starting with `$` (e.g. `$.given_name`)' };
  const segments: PathSegment[] = [];
  let i = 1;
  while (i < path.length) {
    const rest = path.slice(i);
    if (rest.startsWith('..')) return unsupported('recursive descent (`..`)');
    if (rest.startsWith('.*')) {
      segments.push({ wildcard: true });
      i += 2;
      continue;
    }
    if (rest.startsWith('.')) {
      const m = MEMBER.exec(rest.slice(1));
      if (!m) return { ok: false, message: `is not a valid JSONPath: expected a member name after '.' at offset ${i}` };
      segments.push({ key: m[0] });
      i += 1 + m[0].length;
      continue;
    }
    if (rest.startsWith('[')) {
      const quoted = SINGLE_QUOTED.exec(rest) ?? DOUBLE_QUOTED.exec(rest);
      if (quoted) {
        segments.push({ key: quoted[1]!.replace(/\\(.)/g, '$1') });
        i += quoted[0].length;
        continue;
      }
      const index = INDEX.exec(rest);
      if (index) {
        segments.push({ index: Number(index[1]) });
        i += index[0].length;
        continue;
      }
      const wildcard = WILDCARD.exec(rest);
      if (wildcard) {
        segments.push({ wildcard: true });
        i += wildcard[0].length;
        continue;
      }
      if (rest.startsWith('[?')) return unsupported('a filter expression (`[?(...)]`)');
      if (rest.startsWith('[(')) return unsupported('a script expression (`[(...)]`)');
      if (/^\[\s*-\d/.test(rest)) return unsupported('a negative index');
      // One bracket, then its content: a single expression with two unbounded runs would be quadratic.
      const bracket = /^\[[^\]]*\]/.exec(rest);
      if (bracket && /[:,]/.test(bracket[0])) return unsupported('a slice or union (`[a:b]`, `[a,b]`)');
      return { ok: false, message: `is not a valid JSONPath: bad bracket expression at offset ${i}` };
    }
    return { ok: false, message: `is not a valid JSONPath: unexpected '${path[i]}' at offset ${i}` };
  }
  return { ok: true, segments };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface PathMatch {
  readonly path: readonly (string | number)[];
  readonly value: unknown;
}

/** Every match of the path, in document order (PE uses the first). */
export function evaluate(root: unknown, segments: readonly PathSegment[]): PathMatch[] {
  let current: PathMatch[] = [{ path: [], value: root }];
  for (const segment of segments) {
    const next: PathMatch[] = [];
    for (const { path, value } of current) {
      if ('key' in segment) {
        if (isObject(value) && Object.hasOwn(value, segment.key)) next.push({ path: [...path, segment.key], value: value[segment.key] });
      } else if ('index' in segment) {
        if (Array.isArray(value) && segment.index < value.length) next.push({ path: [...path, segment.index], value: value[segment.index] });
      } else if (Array.isArray(value)) {
        value.forEach((item, index) => next.push({ path: [...path, index], value: item }));
      } else if (isObject(value)) {
        for (const [key, item] of Object.entries(value)) next.push({ path: [...path, key], value: item });
      }
    }
    current = next;
  }
  return current.filter((m) => m.value !== undefined);
}

/** RFC 6901 JSON pointer. */
export const toPointer = (path: readonly (string | number)[]): string =>
  path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
