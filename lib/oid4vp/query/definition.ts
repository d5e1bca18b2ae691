// Only pex's compiled DIF PE v2 JSON Schema validator: the package's entry point pulls in an mdoc
// stack (about 2 MB bundled) that a Lambda validating definitions does not need.
import validatePdV2 from '@animo-id/pex/dist/main/lib/validation/validatePDv2.js';
import type { Format, InputDescriptorV2, PresentationDefinitionV2 } from '@sphereon/pex-models';
import { DcqlQuery } from 'dcql';
import { compileFilter } from './filter';
import { isPeFormat, PE_FORMATS, prop, type Issue } from './formats';
import { parseJsonPath } from './jsonpath';

export type { Issue } from './formats';

/** pex-models' Format predates the dc+sd-jwt name. */
export type FormatMap = Format & { readonly 'dc+sd-jwt'?: object };
export type InputDescriptor = Omit<InputDescriptorV2, 'format'> & { format?: FormatMap };
export type PresentationDefinition = Omit<PresentationDefinitionV2, 'format' | 'input_descriptors'> & {
  format?: FormatMap;
  input_descriptors: InputDescriptor[];
};

export type DefinitionValidation =
  | { readonly ok: true; readonly definition: PresentationDefinition }
  | { readonly ok: false; readonly issues: readonly Issue[] };

export type DcqlValidation = { readonly ok: true; readonly query: DcqlQuery } | { readonly ok: false; readonly issues: readonly Issue[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** Constraints we would have to enforce but do not: refused rather than silently ignored. */
const UNENFORCED_CONSTRAINTS: Record<string, string> = {
  subject_is_issuer: 'subject_is_issuer is not supported',
  is_holder: 'is_holder is not supported (holder binding is always checked against the key the credential is bound to)',
  same_subject: 'same_subject is not supported',
  statuses: 'statuses is not supported (a credential with a status list entry is always checked)',
};

function checkFormat(format: unknown, path: string, issues: Issue[]): void {
  if (format === undefined) return;
  if (!isObject(format)) {
    issues.push({ path, message: 'must be an object keyed by format name' });
    return;
  }
  for (const key of Object.keys(format)) {
    if (!isPeFormat(key)) issues.push({ path: prop(path, key), message: `format '${key}' is not supported (supported: ${PE_FORMATS.join(', ')})` });
  }
}

/** Our own checks: precise paths and the restrictions of this service. */
function ownIssues(input: Record<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  if (!nonEmptyString(input.id)) issues.push({ path: 'id', message: 'must be a non-empty string' });
  checkFormat(input.format, 'format', issues);
  const descriptors = input.input_descriptors;
  if (!Array.isArray(descriptors) || descriptors.length === 0) {
    issues.push({ path: 'input_descriptors', message: 'must be an array with at least one input descriptor' });
    return issues;
  }
  const seen = new Map<string, number>();
  descriptors.forEach((descriptor: unknown, i) => {
    const at = `input_descriptors[${i}]`;
    if (!isObject(descriptor)) {
      issues.push({ path: at, message: 'must be an object' });
      return;
    }
    if (!nonEmptyString(descriptor.id)) issues.push({ path: `${at}.id`, message: 'must be a non-empty string' });
    else if (seen.has(descriptor.id))
      issues.push({ path: `${at}.id`, message: `'${descriptor.id}' is already the id of input_descriptors[${seen.get(descriptor.id)}]; descriptor ids must be unique` });
    else seen.set(descriptor.id, i);
    checkFormat(descriptor.format, `${at}.format`, issues);
    const constraints = descriptor.constraints;
    if (!isObject(constraints)) {
      issues.push({ path: `${at}.constraints`, message: 'is required (an object with fields and limit_disclosure)' });
      return;
    }
    const ld = constraints.limit_disclosure;
    if (ld !== undefined && ld !== 'required' && ld !== 'preferred')
      issues.push({ path: `${at}.constraints.limit_disclosure`, message: `must be 'required' or 'preferred' (got ${JSON.stringify(ld)})` });
    for (const [key, message] of Object.entries(UNENFORCED_CONSTRAINTS))
      if (constraints[key] !== undefined) issues.push({ path: `${at}.constraints.${key}`, message });
    const fields = constraints.fields;
    if (fields === undefined) return;
    if (!Array.isArray(fields)) {
      issues.push({ path: `${at}.constraints.fields`, message: 'must be an array' });
      return;
    }
    fields.forEach((field: unknown, k) => {
      const fat = `${at}.constraints.fields[${k}]`;
      if (!isObject(field)) {
        issues.push({ path: fat, message: 'must be an object' });
        return;
      }
      if (!Array.isArray(field.path) || field.path.length === 0) issues.push({ path: `${fat}.path`, message: 'must be a non-empty array of JSONPath strings' });
      else
        field.path.forEach((p: unknown, n) => {
          if (typeof p !== 'string') issues.push({ path: `${fat}.path[${n}]`, message: 'must be a string' });
          else {
            const parsed = parseJsonPath(p);
            if (!parsed.ok) issues.push({ path: `${fat}.path[${n}]`, message: `'${p}' ${parsed.message}` });
          }
        });
      if (field.filter !== undefined) {
        const compiled = compileFilter(field.filter);
        if (!compiled.ok) issues.push({ path: `${fat}.filter`, message: compiled.message });
      }
      if (field.predicate !== undefined)
        issues.push({ path: `${fat}.predicate`, message: 'predicate is not supported (the wallet would send a boolean instead of the claim, which cannot be verified)' });
      if (field.optional !== undefined && typeof field.optional !== 'boolean') issues.push({ path: `${fat}.optional`, message: 'must be a boolean' });
    });
  });
  return issues;
}

/** `/presentation_definition/input_descriptors/0/format` → `input_descriptors[0].format`. */
function fromInstancePath(instancePath: string): string {
  return instancePath
    .replace(/^\/presentation_definition/, '')
    .split('/')
    .filter(Boolean)
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : prop(acc, seg.replace(/~1/g, '/').replace(/~0/g, '~'))), '');
}

const related = (a: string, b: string): boolean => a === b || a === '' || b === '' || b.startsWith(`${a}.`) || b.startsWith(`${a}[`) || a.startsWith(`${b}.`) || a.startsWith(`${b}[`);

/** pex's schema predates dc+sd-jwt: validate with the older name, we check the names ourselves. */
function renameDcSdJwt(input: Record<string, unknown>): Record<string, unknown> {
  const rename = (format: unknown): unknown =>
    isObject(format) && 'dc+sd-jwt' in format
      ? Object.fromEntries(Object.entries(format).map(([k, v]) => [k === 'dc+sd-jwt' ? 'vc+sd-jwt' : k, v]))
      : format;
  const copy: Record<string, unknown> = { ...input };
  if ('format' in copy) copy.format = rename(copy.format);
  if (Array.isArray(copy.input_descriptors))
    copy.input_descriptors = copy.input_descriptors.map((d: unknown) => (isObject(d) && 'format' in d ? { ...d, format: rename(d.format) } : d));
  return copy;
}

interface AjvError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly message?: string;
  readonly params: Record<string, unknown>;
}

function pexIssues(input: Record<string, unknown>): Issue[] {
  const target = renameDcSdJwt(input);
  const inputDescriptors = Array.isArray(target.input_descriptors) ? target.input_descriptors : [];
  if (inputDescriptors.some((d) => isObject(d) && 'schema' in d)) {
    return [{ path: '', message: 'is a presentation exchange v1 definition (input_descriptors[].schema); only v2 is supported' }];
  }
  const validate = validatePdV2 as unknown as ((data: unknown) => boolean) & { errors?: AjvError[] | null };
  // The schema describes the definition as it is wrapped in an OpenID4VP request.
  if (validate({ presentation_definition: target })) return [];
  const issues: Issue[] = [];
  for (const error of validate.errors ?? []) {
    // Combinator summaries and the predicate branch of pex's field oneOf only repeat other errors.
    if (['anyOf', 'oneOf', 'if'].includes(error.keyword)) continue;
    if (error.keyword === 'required' && error.params.missingProperty === 'predicate') continue;
    let path = fromInstancePath(error.instancePath);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'additionalProperties') {
      path = prop(path, String(error.params.additionalProperty));
      message = 'is not a property presentation exchange v2 allows here';
    } else if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues)) {
      message = `must be one of ${error.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    if (!issues.some((i) => i.path === path)) issues.push({ path, message });
  }
  return issues.length > 0 ? issues : [{ path: '', message: 'is not a valid presentation exchange v2 definition' }];
}

/**
 * A presentation definition (DIF PE v2) this service can use: valid to @animo-id/pex, and within
 * what we verify (our formats, evaluable JSONPaths, compilable filters, no constraints we would ignore).
 */
export function validatePresentationDefinition(input: unknown): DefinitionValidation {
  if (!isObject(input)) return { ok: false, issues: [{ path: '', message: 'must be a JSON object (a DIF Presentation Exchange v2 presentation definition)' }] };
  const own = ownIssues(input);
  // Ours name the exact path; pex's about the same spot would only repeat them less precisely.
  const fromPex = pexIssues(input).filter((p) => !own.some((o) => related(o.path, p.path)));
  const issues = [...own, ...fromPex];
  return issues.length > 0 ? { ok: false, issues } : { ok: true, definition: input as unknown as PresentationDefinition };
}

/** DCQL formats we verify: SD-JWT VC and JWT VCs (the 1.0 names only). */
export const DCQL_FORMATS = ['dc+sd-jwt', 'jwt_vc_json'] as const;

interface ValiIssueLike {
  readonly message: string;
  readonly path?: readonly { readonly key: unknown }[];
}

const issuePath = (keys: readonly unknown[]): string =>
  keys.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : prop(acc, String(key))), '');

/** A DCQL query (OpenID4VP 1.0 §6) restricted to what this service verifies. */
export function validateDcqlQuery(input: unknown): DcqlValidation {
  let query: DcqlQuery;
  try {
    query = DcqlQuery.parse(input as DcqlQuery.Input);
  } catch (e) {
    const vali = (e as { issues?: readonly ValiIssueLike[] }).issues;
    if (!Array.isArray(vali)) return { ok: false, issues: [{ path: '', message: e instanceof Error ? e.message : String(e) }] };
    const issues: Issue[] = [];
    for (const i of vali as readonly ValiIssueLike[]) {
      const path = issuePath((i.path ?? []).map((p) => p.key));
      if (!issues.some((x) => x.path === path)) issues.push({ path, message: i.message });
    }
    return { ok: false, issues };
  }
  const issues: Issue[] = [];
  const ids = new Map<string, number>();
  query.credentials.forEach((cq, i) => {
    if (ids.has(cq.id)) issues.push({ path: `credentials[${i}].id`, message: `'${cq.id}' is already the id of credentials[${ids.get(cq.id)}]` });
    else ids.set(cq.id, i);
  });
  query.credential_sets?.forEach((set, s) =>
    set.options.forEach((option, o) =>
      option.forEach((id, n) => {
        if (!ids.has(id)) issues.push({ path: `credential_sets[${s}].options[${o}][${n}]`, message: `'${id}' is not the id of a credential query` });
      }),
    ),
  );
  query.credentials.forEach((cq, i) => {
    const at = `credentials[${i}]`;
    if (!(DCQL_FORMATS as readonly string[]).includes(cq.format)) {
      issues.push({
        path: `${at}.format`,
        message:
          cq.format === 'vc+sd-jwt'
            ? "'vc+sd-jwt' is not an OpenID4VP 1.0 DCQL format: use 'dc+sd-jwt' for SD-JWT VCs"
            : `format '${cq.format}' is not supported (supported: ${DCQL_FORMATS.join(', ')})`,
      });
      return;
    }
    if (cq.format === 'dc+sd-jwt' && !(cq.meta && 'vct_values' in cq.meta && cq.meta.vct_values && cq.meta.vct_values.length > 0))
      issues.push({ path: `${at}.meta.vct_values`, message: 'is required for dc+sd-jwt (OpenID4VP 1.0 makes vct_values REQUIRED): a non-empty array of vct values' });
    if (cq.multiple) issues.push({ path: `${at}.multiple`, message: 'multiple credentials per query are not supported (one credential is recorded per query id)' });
    if (cq.trusted_authorities)
      issues.push({ path: `${at}.trusted_authorities`, message: 'is not supported: the service cannot check a credential against trusted authorities (configure trusted issuers instead)' });
    const claims = (cq.claims ?? []) as readonly { id?: string; path: readonly unknown[] }[];
    const seenPaths = new Map<string, number>();
    const seenIds = new Map<string, number>();
    claims.forEach((claim, k) => {
      const key = JSON.stringify(claim.path);
      if (seenPaths.has(key)) issues.push({ path: `${at}.claims[${k}].path`, message: `points to the same claim as claims[${seenPaths.get(key)}] (OpenID4VP 1.0 §6.1)` });
      else seenPaths.set(key, k);
      if (claim.id !== undefined) {
        if (seenIds.has(claim.id)) issues.push({ path: `${at}.claims[${k}].id`, message: `'${claim.id}' is already the id of claims[${seenIds.get(claim.id)}]` });
        else seenIds.set(claim.id, k);
      } else if (cq.claim_sets) issues.push({ path: `${at}.claims[${k}].id`, message: 'is required when claim_sets is present' });
    });
    if (cq.claim_sets && !cq.claims) issues.push({ path: `${at}.claim_sets`, message: 'must not be present without claims' });
    cq.claim_sets?.forEach((set, j) =>
      set.forEach((id, n) => {
        if (cq.claims && !seenIds.has(id)) issues.push({ path: `${at}.claim_sets[${j}][${n}]`, message: `'${id}' is not the id of a claim of this credential query` });
      }),
    );
  });
  if (issues.length > 0) return { ok: false, issues };
  try {
    DcqlQuery.validate(query); // backstop for rules dcql adds later
  } catch (e) {
    return { ok: false, issues: [{ path: '', message: e instanceof Error ? e.message : String(e) }] };
  }
  return { ok: true, query };
}
