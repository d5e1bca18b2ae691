import { createHash } from 'node:crypto';
import type { Area } from '../../lib/service/areas';
import type { Route } from '../../lib/service/routes';

/** The API resource paths a route's path passes through, parents first: `/a/{b}` → `/a`, `/a/{b}`. */
export function resourcePaths(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}

/**
 * Where each API resource is created. A resource only one area's routes pass through belongs to that
 * area's stack; one that routes of several areas pass through (`/api`, `/api/v1`, …) is created once,
 * in the root stack, and handed to each of those areas: API Gateway refuses a second resource with
 * the same path. Computed from the route table, so a new route group needs nothing here.
 */
export function apiLayout(routes: readonly Route[], areaOf: (route: Route) => Area): { readonly shared: readonly string[]; readonly ownerOf: ReadonlyMap<string, Area | 'shared'> } {
  const areas = new Map<string, Set<Area>>();
  for (const route of routes) {
    for (const path of resourcePaths(route.path)) {
      if (!areas.has(path)) areas.set(path, new Set());
      areas.get(path)!.add(areaOf(route));
    }
  }
  const ownerOf = new Map<string, Area | 'shared'>([...areas].map(([path, set]) => [path, set.size > 1 ? 'shared' : [...set][0]!]));
  // Parents first: a shared resource's parent is shared too (every route under it passes through it).
  const shared = [...ownerOf].filter(([, owner]) => owner === 'shared').map(([path]) => path).sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  return { shared, ownerOf };
}

/** The deepest shared resource a path starts with (the path itself included), or null. */
export function sharedAncestor(path: string, shared: readonly string[]): string | null {
  const candidates = resourcePaths(path).filter((p) => shared.includes(p));
  return candidates.at(-1) ?? null;
}

/**
 * CloudFormation parameter names for shared resources' ids, readable (`/api/v1/settings` →
 * `ApiResourceApiV1Settings`); paths whose readable names collide (`/a-b`, `/a.b`) get a hash of the path.
 */
export function resourceParameterNames(paths: readonly string[]): ReadonlyMap<string, string> {
  const readable = (path: string) => `ApiResource${path.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') || 'Root'}`;
  const counts = new Map<string, number>();
  for (const p of paths) counts.set(readable(p), (counts.get(readable(p)) ?? 0) + 1);
  return new Map(paths.map((p) => [p, counts.get(readable(p))! > 1 ? `${readable(p)}${createHash('sha256').update(p).digest('hex').slice(0, 8)}` : readable(p)]));
}
