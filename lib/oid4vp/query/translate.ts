import { DcqlQuery } from 'dcql';
import { validatePresentationDefinition, type PresentationDefinition } from './definition';
import { allowedFamilies, formatSource, type CredentialFamily, type Issue } from './formats';
import { parseJsonPath, type PathSegment } from './jsonpath';

export type Translation = { readonly ok: true; readonly query: DcqlQuery } | { readonly ok: false; readonly issues: readonly Issue[] };

type ClaimPath = (string | number)[];
type ClaimValue = string | number | boolean;

interface ClaimDraft {
  id?: string;
  path: ClaimPath;
  values?: ClaimValue[];
  optional: boolean;
  fieldIndex: number;
}

const DCQL_ID = /^[A-Za-z0-9_-]+$/;
/** 2^3 = 8 claim sets at most: beyond that the request grows faster than it helps. */
const MAX_OPTIONAL_FIELDS = 3;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isClaimValue = (v: unknown): v is ClaimValue => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));

/** DCQL `values` only holds strings, integers and booleans; anything else is left to the response-time re-check. */
function valuesOf(filter: unknown): ClaimValue[] | undefined {
  if (!isObject(filter)) return undefined;
  if ('const' in filter) return isClaimValue(filter.const) ? [filter.const] : undefined;
  if (Array.isArray(filter.enum) && filter.enum.length > 0 && filter.enum.every(isClaimValue)) return [...filter.enum];
  return undefined;
}

const stringsOf = (filter: unknown): string[] | undefined => {
  const values = valuesOf(filter);
  return values?.every((v) => typeof v === 'string') ? (values as string[]) : undefined;
};

/** `$.type` filters: `contains: {const}` or `contains: {enum}` → alternatives of one type each. */
function typeAlternatives(filter: unknown): string[] | undefined {
  if (!isObject(filter) || !isObject(filter.contains)) return undefined;
  return stringsOf(filter.contains);
}

/** The DCQL claim path of a PE path, for the credential family (W3C: relative to the VC, so `vc` goes). */
function claimPath(segments: readonly PathSegment[], family: CredentialFamily): ClaimPath | string {
  const out: ClaimPath = [];
  for (const s of segments) {
    if ('wildcard' in s) return 'uses a wildcard, which has no exact DCQL claim path';
    out.push('key' in s ? s.key : s.index);
  }
  if (family === 'jwt_vc_json' && out[0] === 'vc') out.shift();
  if (out.length === 0) return 'points at the whole credential; name a claim';
  return out;
}

const samePath = (a: readonly (string | number)[], b: readonly (string | number)[]): boolean => a.length === b.length && a.every((s, i) => s === b[i]);
const isPath = (p: ClaimPath, ...expected: string[]): boolean => samePath(p, expected);

/** Which family a descriptor's fields point at, when its formats allow both. */
function familyHint(paths: readonly ClaimPath[]): CredentialFamily | undefined {
  const sdJwt = paths.some((p) => isPath(p, 'vct'));
  const w3c = paths.some((p) => isPath(p, 'type') || p[0] === 'vc' || p[0] === 'credentialSubject');
  if (sdJwt === w3c) return undefined;
  return sdJwt ? 'dc+sd-jwt' : 'jwt_vc_json';
}

function subsets<T>(items: readonly T[]): T[][] {
  const all: T[][] = [[]];
  for (const item of items) for (const s of [...all]) all.push([...s, item]);
  // Larger sets first: claim_sets order is the Verifier's preference (OpenID4VP 1.0 §6.4.1).
  return all.sort((a, b) => b.length - a.length);
}

/**
 * The DCQL query (OpenID4VP 1.0 §6) equivalent to a presentation definition: one credential query per
 * input descriptor, with the descriptor's id. Filters DCQL cannot express (patterns, ranges …) do not
 * refuse a translation: the claim is requested and the original filter re-checked on the response
 * (`matchDcqlForDefinition`). What cannot be requested exactly is refused with issues naming the path.
 */
export function dcqlFromDefinition(input: PresentationDefinition): Translation {
  const validation = validatePresentationDefinition(input);
  if (!validation.ok) return validation;
  const definition = validation.definition;
  const issues: Issue[] = [];
  if (definition.submission_requirements !== undefined)
    issues.push({
      path: 'submission_requirements',
      message: 'cannot be translated to DCQL: remove it (every input descriptor is then required) or send a DCQL query with credential_sets',
    });

  const credentials: Record<string, unknown>[] = [];
  definition.input_descriptors.forEach((descriptor, i) => {
    const at = `input_descriptors[${i}]`;
    const before = issues.length;
    if (!DCQL_ID.test(descriptor.id))
      issues.push({ path: `${at}.id`, message: `'${descriptor.id}' cannot be a DCQL credential id (letters, digits, '_' and '-' only)` });

    const fields = descriptor.constraints.fields ?? [];
    const parsed = fields.map((field) => field.path.map((p) => parseJsonPath(p)));
    const rawPaths = parsed.flat().flatMap((p) => (p.ok ? [p.segments.map((s) => ('key' in s ? s.key : 'index' in s ? s.index : '*'))] : []));

    const allowed = allowedFamilies(definition, i, descriptor);
    const candidates = allowed ? [...allowed] : (['dc+sd-jwt', 'jwt_vc_json'] as CredentialFamily[]);
    let family: CredentialFamily | undefined;
    if (candidates.length === 1) family = candidates[0];
    else {
      family = familyHint(rawPaths as ClaimPath[]);
      if (!family)
        issues.push({
          path: formatSource(definition, i, descriptor)?.path ?? at,
          message:
            'allows both SD-JWT VC and JWT VC credentials and the fields do not tell which: list one format, or add a `$.vct` (SD-JWT VC) or `$.type` (JWT VC) field',
        });
    }
    if (!family) return;

    let vctValues: string[] | undefined;
    let typeValues: string[][] | undefined;
    let typeFieldRefused = false; // already reported at the field
    const claims: ClaimDraft[] = [];
    fields.forEach((field, k) => {
      const fat = `${at}.constraints.fields[${k}]`;
      const alternatives: ClaimPath[] = [];
      parsed[k]!.forEach((p, n) => {
        if (!p.ok) return; // validation has refused it already
        const path = claimPath(p.segments, family);
        if (typeof path === 'string') issues.push({ path: `${fat}.path[${n}]`, message: `'${field.path[n]}' ${path}` });
        else if (!alternatives.some((a) => samePath(a, path)))
          alternatives.push(path);
      });
      if (alternatives.length > 1) {
        issues.push({
          path: `${fat}.path`,
          message: `lists alternative claims (${field.path.join(', ')}) that DCQL cannot request as one claim; only one claim spelled two ways (\`$.x\` and \`$.vc.x\`) may be listed together`,
        });
        return;
      }
      const path = alternatives[0];
      if (!path) return;

      if (family === 'dc+sd-jwt' && isPath(path, 'vct')) {
        const values = stringsOf(field.filter);
        if (!values) {
          issues.push({ path: `${fat}.filter`, message: 'a `$.vct` field needs a `const` or `enum` filter of strings: OpenID4VP 1.0 requires meta.vct_values' });
          typeFieldRefused = true;
          return;
        }
        vctValues = vctValues ? vctValues.filter((v) => values.includes(v)) : values;
        return;
      }
      if (family === 'jwt_vc_json' && isPath(path, 'type')) {
        const alternativesOfType = typeAlternatives(field.filter);
        if (!alternativesOfType) {
          issues.push({
            path: `${fat}.filter`,
            message: 'a `$.type` field needs a `contains: {const}` or `contains: {enum}` filter of strings: OpenID4VP 1.0 requires meta.type_values',
          });
          typeFieldRefused = true;
          return;
        }
        // Several type fields must all hold: each alternative set gains one of this field's types.
        typeValues = (typeValues ?? [[]]).flatMap((set) => alternativesOfType.map((t) => [...set, t]));
        return;
      }
      const values = valuesOf(field.filter);
      const existing = claims.find((c) => samePath(c.path, path));
      if (existing) {
        // DCQL forbids pointing at a claim twice: merge, both filters are re-checked anyway.
        existing.optional &&= field.optional === true;
        if (values) existing.values = existing.values ? existing.values.filter((v) => values.includes(v)) : values;
        if (existing.values?.length === 0) delete existing.values;
        return;
      }
      claims.push({ path, ...(values ? { values } : {}), optional: field.optional === true, fieldIndex: k });
    });

    if (family === 'dc+sd-jwt' && !vctValues && !typeFieldRefused)
      issues.push({ path: `${at}.constraints.fields`, message: 'needs a `$.vct` field with a `const` or `enum` filter: OpenID4VP 1.0 requires meta.vct_values for dc+sd-jwt' });
    if (family === 'dc+sd-jwt' && vctValues?.length === 0)
      issues.push({ path: `${at}.constraints.fields`, message: 'the `$.vct` filters admit no common value' });
    if (family === 'jwt_vc_json' && !typeValues && !typeFieldRefused)
      issues.push({
        path: `${at}.constraints.fields`,
        message: 'needs a `$.type` (or `$.vc.type`) field with a `contains: {const}` filter: OpenID4VP 1.0 requires meta.type_values for jwt_vc_json',
      });

    const optional = claims.filter((c) => c.optional);
    if (optional.length > MAX_OPTIONAL_FIELDS)
      issues.push({
        path: `${at}.constraints.fields`,
        message: `has ${optional.length} optional fields; at most ${MAX_OPTIONAL_FIELDS} can be translated (each combination becomes a DCQL claim set)`,
      });
    if (issues.length > before) return;

    const credential: Record<string, unknown> = {
      id: descriptor.id,
      format: family,
      meta: family === 'dc+sd-jwt' ? { vct_values: vctValues } : { type_values: typeValues },
    };
    if (claims.length > 0) {
      const dcqlClaims = claims.map((c) => ({ path: c.path, ...(c.values ? { values: c.values } : {}) }));
      if (optional.length > 0) {
        const ids = claims.map((c) => `f${c.fieldIndex}`);
        const required = claims.flatMap((c, n) => (c.optional ? [] : [ids[n]!]));
        const optionalIds = claims.flatMap((c, n) => (c.optional ? [ids[n]!] : []));
        const withIds: Record<string, unknown>[] = dcqlClaims.map((c, n) => ({ id: ids[n], ...c }));
        // A claim set cannot be empty: when every field is optional, the type claim (always present) anchors it.
        if (required.length === 0) {
          withIds.push({ id: 'type', path: [family === 'dc+sd-jwt' ? 'vct' : 'type'] });
          required.push('type');
        }
        credential.claims = withIds;
        credential.claim_sets = subsets(optionalIds).map((s) => [...required, ...s]);
      } else credential.claims = dcqlClaims;
    }
    credentials.push(credential);
  });
  if (issues.length > 0) return { ok: false, issues };

  const query = DcqlQuery.parse({ credentials } as unknown as DcqlQuery.Input);
  DcqlQuery.validate(query);
  return { ok: true, query };
}
