/**
 * Which request paths count as the public routes' for the per-source limits (SOURCE_LIMITS): the
 * stage's WAF scope-down (infra/constructs/source-limits.ts) and the local gateway read the same
 * patterns, so both count a request alike.
 */
import type { Route } from './routes';

/** WAF's longest regular expression in a regex match statement. */
const WAF_MAX_REGEX = 512;

const segments = (path: string) => path.split('/').filter(Boolean);
const isParam = (segment: string) => /^\{[^}]+\}$/.test(segment);
const compatible = (a: string, b: string) => a === b || isParam(a) || isParam(b);
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The request paths of the public routes, as anchored regular expressions (WAF's regex syntax, which
 * JavaScript reads alike) over the URI path a client sends: with the stage in front (`/<stage>/…`, the
 * execute-api URL) or without it (a custom domain mapped at its root). Each public route is matched by
 * its shortest path prefix that no authenticated route can share, so a public prefix also holds the
 * anonymous 404s under it (unknown DIDs, lists, offers); a route no prefix sets apart is matched
 * exactly. A public route that some authenticated route cannot be told from by its path is refused:
 * the per-source rule could not hold it apart.
 */
export function publicPathPatterns(routes: readonly Route[], stageName: string): string[] {
  const others = routes.filter((r) => r.auth !== 'public').map((r) => ({ route: r, parts: segments(r.path) }));
  const alternatives = new Set<string>();
  for (const route of routes.filter((r) => r.auth === 'public')) {
    const parts = segments(route.path);
    const shares = (k: number, exact: boolean) =>
      others.find((o) => (exact ? o.parts.length === k : o.parts.length >= k) && parts.slice(0, k).every((p, i) => compatible(p, o.parts[i]!)));
    const regexOf = (k: number) => `/${parts.slice(0, k).map((p) => (isParam(p) ? '[^/]+' : escapeRegex(p))).join('/')}`;
    const k = parts.findIndex((_, i) => !shares(i + 1, false)) + 1;
    if (k > 0 && k < parts.length) {
      alternatives.add(`${regexOf(k)}(/.*)?`);
    } else if (k === parts.length && parts.length > 0) {
      alternatives.add(`${regexOf(k)}(/.*)?`);
    } else {
      const clash = shares(parts.length, true);
      if (clash) throw new Error(`public route ${route.method} ${route.path} cannot be told from ${clash.route.auth} route ${clash.route.method} ${clash.route.path} by its path: the per-source WAF rule needs another condition for them`);
      alternatives.add(parts.length ? `${regexOf(parts.length)}` : '/');
    }
  }
  return chunkAlternatives([...alternatives].sort(), `^(/${escapeRegex(stageName)})?(`, ')$');
}

/** Alternatives joined into as few regular expressions as WAF's length limit allows. */
function chunkAlternatives(alternatives: string[], prefix: string, suffix: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  const render = (alts: string[]) => `${prefix}${alts.join('|')}${suffix}`;
  for (const alt of alternatives) {
    if (render([alt]).length > WAF_MAX_REGEX) throw new Error(`the public path pattern ${alt} is longer than WAF allows`);
    if (current.length && render([...current, alt]).length > WAF_MAX_REGEX) {
      out.push(render(current));
      current = [];
    }
    current.push(alt);
  }
  if (current.length) out.push(render(current));
  return out;
}

