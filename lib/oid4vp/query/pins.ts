import type { RequestQuery } from '../records';
import { comparableIssuer } from '../verification/trust';
import { parseJsonPath } from './jsonpath';

/**
 * The issuers a request pins, per DCQL credential query id (or input descriptor id): the values its
 * `iss` claim must take. A pin is a requirement every answer must meet, so only these count:
 * - a definition field whose every path is `$.iss`, not `optional`, with a `const` or `enum` filter
 *   of strings (the whole filter is still checked when the answer is matched);
 * - a DCQL claim with path `["iss"]` and `values`, in every one of the query's `claim_sets`.
 * A requirement an answer may skip (an optional field, a claim outside some claim set) pins nothing.
 */
export function issuerPins(query: RequestQuery): ReadonlyMap<string, ReadonlySet<string>> {
  return query.kind === 'pe' ? definitionPins(query.definition) : dcqlPins(query.dcql);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (values: readonly unknown[]) => values.filter((v): v is string => typeof v === 'string');

function intersect(a: Set<string> | undefined, b: Set<string>): Set<string> {
  return a ? new Set([...a].filter((v) => b.has(v))) : b;
}

function filterValues(filter: unknown): Set<string> | undefined {
  if (!isObject(filter)) return undefined;
  if ('const' in filter) return typeof filter.const === 'string' ? new Set([comparableIssuer(filter.const)]) : new Set();
  if (Array.isArray(filter.enum)) return new Set(strings(filter.enum).map(comparableIssuer));
  return undefined;
}

const isIssPath = (path: unknown): boolean => {
  if (typeof path !== 'string') return false;
  const parsed = parseJsonPath(path);
  return parsed.ok && parsed.segments.length === 1 && 'key' in parsed.segments[0]! && parsed.segments[0].key === 'iss';
};

function definitionPins(definition: Record<string, unknown>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const descriptors = Array.isArray(definition.input_descriptors) ? definition.input_descriptors : [];
  for (const d of descriptors) {
    if (!isObject(d) || typeof d.id !== 'string' || !isObject(d.constraints)) continue;
    const fields = Array.isArray(d.constraints.fields) ? d.constraints.fields : [];
    let pinned: Set<string> | undefined;
    for (const f of fields) {
      if (!isObject(f) || f.optional === true || !Array.isArray(f.path) || f.path.length === 0 || !f.path.every(isIssPath)) continue;
      const values = filterValues(f.filter);
      if (values) pinned = intersect(pinned, values);
    }
    if (pinned) out.set(d.id, pinned);
  }
  return out;
}

function dcqlPins(dcql: Record<string, unknown>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const credentials = Array.isArray(dcql.credentials) ? dcql.credentials : [];
  for (const c of credentials) {
    if (!isObject(c) || typeof c.id !== 'string' || !Array.isArray(c.claims)) continue;
    const sets = Array.isArray(c.claim_sets) ? (c.claim_sets as unknown[]) : undefined;
    let pinned: Set<string> | undefined;
    for (const claim of c.claims) {
      if (!isObject(claim) || !Array.isArray(claim.path) || claim.path.length !== 1 || claim.path[0] !== 'iss' || !Array.isArray(claim.values)) continue;
      const required = sets === undefined || sets.every((set) => Array.isArray(set) && typeof claim.id === 'string' && set.includes(claim.id));
      if (required) pinned = intersect(pinned, new Set(strings(claim.values).map(comparableIssuer)));
    }
    if (pinned) out.set(c.id, pinned);
  }
  return out;
}
