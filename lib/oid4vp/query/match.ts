import { DcqlPresentationResult, type DcqlCredentialPresentation, type DcqlQuery } from 'dcql';
import { PresentationInvalidError, type PresentedFormat, type TrustReason, type VerifiedCredential } from '../verification/types';
import type { InputDescriptor, PresentationDefinition } from './definition';
import { filterFailure } from './filter';
import { allowedFamilies, familyOfPresented, formatSource, isPeFormat, familyOf } from './formats';
import { evaluate, parseJsonPath, toPointer } from './jsonpath';

/** What the presentation record keeps of a credential that satisfied its query. */
export interface MatchedCredential {
  readonly format: PresentedFormat;
  readonly issuer: string;
  readonly vct?: string;
  readonly types?: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
  /** JSON pointers (RFC 6901) of the selectively disclosable claims the holder disclosed. */
  readonly disclosed: readonly string[];
  /** Why its issuer is trusted (docs/oid4vp.md, "Which issuers are trusted"). */
  readonly issuer_trust: TrustReason;
}

/** Keyed by DCQL credential query id or input descriptor id. */
export type MatchedCredentials = Readonly<Record<string, MatchedCredential>>;

type DisclosedPath = readonly (string | number)[];
type ClaimPath = readonly (string | number | null)[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the record keeps; a credential whose issuer no trust decision covers is never accepted. */
function matched(credential: VerifiedCredential): MatchedCredential {
  if (!credential.issuerTrust) throw new PresentationInvalidError('untrusted_issuer', `${credential.issuer} was not checked for trust`);
  return {
    format: credential.format,
    issuer: credential.issuer,
    ...(credential.vct !== undefined ? { vct: credential.vct } : {}),
    ...(credential.types !== undefined ? { types: credential.types } : {}),
    claims: credential.claims,
    disclosed: credential.disclosedPaths.map(toPointer),
    issuer_trust: credential.issuerTrust,
  };
}

/**
 * A disclosure is covered by a requested claim when it is that claim, inside it (a member or an
 * array element of it), or an object on the way to it (the parent disclosure that carries its digest).
 */
function covers(requested: ClaimPath, disclosed: DisclosedPath): boolean {
  const n = Math.min(requested.length, disclosed.length);
  for (let i = 0; i < n; i++) {
    const r = requested[i];
    if (r === null ? typeof disclosed[i] !== 'number' : r !== disclosed[i]) return false;
  }
  return true;
}

const uncovered = (disclosed: readonly DisclosedPath[], requested: readonly ClaimPath[]): DisclosedPath[] =>
  disclosed.filter((d) => !requested.some((r) => covers(r, d)));

/** The W3C VC as DCQL sees it: claims paths start at the VC, not at the JWT around it (OpenID4VP 1.0, W3C VC claims matching). */
function w3cRoot(claims: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { vc, ...rest } = claims;
  return isObject(vc) ? { ...rest, ...vc } : { ...rest };
}

function toDcql(credential: VerifiedCredential): DcqlCredentialPresentation {
  if (credential.format === 'jwt_vc_json') {
    const root = w3cRoot(credential.claims);
    const type = credential.types ?? (Array.isArray(root.type) ? root.type : []);
    return {
      credential_format: 'jwt_vc_json',
      type: type.filter((t): t is string => typeof t === 'string'),
      claims: root as never,
      cryptographic_holder_binding: credential.holderBound,
    };
  }
  // vc+sd-jwt is the pre-1.0 typ of the same SD-JWT VC: it answers a dc+sd-jwt query.
  return {
    credential_format: 'dc+sd-jwt',
    vct: credential.vct ?? (typeof credential.claims.vct === 'string' ? credential.claims.vct : ''),
    claims: credential.claims as never,
    cryptographic_holder_binding: credential.holderBound,
  };
}

/** dcql's flattened valibot issues, as one readable line. */
function messages(issues: unknown): string[] {
  if (typeof issues === 'string') return [issues];
  if (Array.isArray(issues)) return issues.flatMap(messages);
  if (isObject(issues)) return Object.values(issues).flatMap(messages);
  return [];
}

type QueryMatch = DcqlPresentationResult['credential_matches'][string];

function failureDetail(id: string, match: QueryMatch): string {
  const failed = match.failed_credentials?.[0];
  if (!failed) return `credential query '${id}' is not satisfied`;
  const parts = [
    ...(failed.meta.success ? [] : messages(failed.meta.issues)),
    ...(failed.claims.success ? [] : messages(failed.claims.failed_claim_sets?.[0]?.issues ?? failed.claims.failed_claims.map((c) => c.issues))),
    ...(failed.trusted_authorities.success ? [] : ['no trusted authority matches']),
  ];
  return `credential query '${id}': ${[...new Set(parts)].join('; ') || 'not satisfied'}`;
}

export interface MatchDcqlOptions {
  /**
   * Refuse selectively disclosable claims beyond those requested (`extra_disclosure`). OpenID4VP 1.0
   * §6.4: "Wallets MUST NOT send selectively disclosable claims that have not been selected", and
   * without `claims` only the mandatory ones are requested; so for a DCQL request pass `true`. A
   * function decides per credential query id (PE-derived: limit_disclosure required).
   */
  readonly strict: boolean | ((credentialQueryId: string) => boolean);
}

/**
 * Whether the verified credentials answer the DCQL query (credential_sets and claim_sets included),
 * decided by dcql's presentation evaluation. Throws PresentationInvalidError.
 */
export function matchDcql(
  query: DcqlQuery,
  presented: Readonly<Record<string, readonly VerifiedCredential[]>>,
  opts: MatchDcqlOptions,
): MatchedCredentials {
  const queries = new Map(query.credentials.map((c) => [c.id, c]));
  const answered = Object.entries(presented).filter(([, list]) => list.length > 0);
  for (const [id, list] of answered) {
    const cq = queries.get(id);
    if (!cq) throw new PresentationInvalidError('invalid_submission', `the vp_token answers '${id}', which is not a credential query of the request`, id);
    if (list.length > 1 && !cq.multiple)
      throw new PresentationInvalidError('invalid_submission', `the vp_token holds ${list.length} presentations for '${id}', which does not allow multiple`, id);
    if (cq.require_cryptographic_holder_binding !== false && list.some((c) => !c.holderBound))
      throw new PresentationInvalidError('missing_key_binding', `credential query '${id}' requires holder binding`, id);
  }

  let result: DcqlPresentationResult;
  try {
    result = DcqlPresentationResult.fromDcqlPresentation(Object.fromEntries(answered.map(([id, list]) => [id, list.map(toDcql)])), { dcqlQuery: query });
  } catch (e) {
    throw new PresentationInvalidError('invalid_submission', e instanceof Error ? e.message : String(e));
  }

  // A presented credential that fails its query is refused even when a credential set is optional.
  for (const [id, match] of Object.entries(result.credential_matches))
    if (!match.success || match.failed_credentials) throw new PresentationInvalidError('constraints_not_met', failureDetail(id, match), id);
  if (!result.can_be_satisfied) {
    const sets = result.credential_sets ?? [];
    const unmet = sets.findIndex((s) => s.required && !s.matching_options);
    if (unmet >= 0) {
      const options = sets[unmet]!.options;
      const missing = options[0]?.find((id) => !presented[id]?.length);
      throw new PresentationInvalidError(
        'missing_credential',
        `credential_sets[${unmet}] is not satisfied: none of its options (${options.map((o) => `[${o.join(', ')}]`).join(' | ')}) was presented`,
        missing,
      );
    }
    const missing = query.credentials.find((c) => !presented[c.id]?.length);
    throw new PresentationInvalidError('missing_credential', `credential query '${missing?.id}' was not answered`, missing?.id);
  }

  const out: Record<string, MatchedCredential> = {};
  for (const [id, list] of answered) {
    const cq = queries.get(id)!;
    const strict = typeof opts.strict === 'function' ? opts.strict(id) : opts.strict;
    if (strict) {
      const claims = (cq.claims ?? []) as readonly { path: ClaimPath }[];
      const match = result.credential_matches[id]!;
      list.forEach((credential, n) => {
        // Allowed: the claims of one claim set this credential satisfies (all claims without claim_sets).
        const sets = match.valid_credentials?.find((v) => v.input_credential_index === n)?.claims.valid_claim_sets ?? [];
        const candidates = cq.claims ? sets.map((s) => (s.valid_claim_indexes ?? []).map((k) => claims[k]!.path)) : [[]];
        const extras = candidates.map((requested) => uncovered(credential.disclosedPaths, requested));
        const fewest = extras.reduce((a, b) => (b.length < a.length ? b : a), extras[0] ?? []);
        if (fewest.length > 0)
          throw new PresentationInvalidError(
            'extra_disclosure',
            `credential query '${id}': disclosed ${fewest.map(toPointer).join(', ')}, which the query did not request`,
            id,
          );
      });
    }
    out[id] = matched(list[0]!);
  }
  return out;
}

interface FieldOutcome {
  readonly ok: boolean;
  readonly path?: readonly (string | number)[];
  readonly reason?: string;
}

/** PE v2 §5.1: try each path in order; its first match must pass the filter, else try the next. */
function evaluateField(field: NonNullable<InputDescriptor['constraints']['fields']>[number], claims: Readonly<Record<string, unknown>>): FieldOutcome {
  const reasons: string[] = [];
  for (const p of field.path) {
    const parsed = parseJsonPath(p);
    if (!parsed.ok) {
      reasons.push(`${p} ${parsed.message}`);
      continue;
    }
    const first = evaluate(claims, parsed.segments)[0];
    if (!first) {
      reasons.push(`${p} is absent`);
      continue;
    }
    const failure = field.filter === undefined ? undefined : filterFailure(field.filter, first.value);
    if (failure === undefined) return { ok: true, path: first.path };
    reasons.push(`${p} fails its filter (${failure})`);
  }
  return { ok: false, reason: reasons.join('; ') };
}

function descriptorFormatsAllow(definition: PresentationDefinition, index: number, descriptor: InputDescriptor, format: PresentedFormat): boolean {
  const families = allowedFamilies(definition, index, descriptor);
  return !families || families.has(familyOfPresented(format));
}

/**
 * Whether each input descriptor's constraints hold on its verified credential: every non-optional
 * field resolves and passes its filter; under limit_disclosure required nothing else selectively
 * disclosable was disclosed. Every descriptor is required (submission_requirements are not evaluated).
 */
export function matchDefinition(definition: PresentationDefinition, presented: Readonly<Record<string, VerifiedCredential>>): MatchedCredentials {
  const descriptors = definition.input_descriptors;
  for (const id of Object.keys(presented))
    if (!descriptors.some((d) => d.id === id))
      throw new PresentationInvalidError('invalid_submission', `'${id}' is not an input descriptor of definition '${definition.id}'`, id);

  const out: Record<string, MatchedCredential> = {};
  descriptors.forEach((descriptor, i) => {
    const credential = presented[descriptor.id];
    if (!credential) throw new PresentationInvalidError('missing_credential', `no credential was presented for input descriptor '${descriptor.id}'`, descriptor.id);
    if (!descriptorFormatsAllow(definition, i, descriptor, credential.format))
      throw new PresentationInvalidError(
        'unsupported_format',
        `input descriptor '${descriptor.id}' does not allow ${credential.format} (allowed: ${formatSource(definition, i, descriptor)?.formats.join(', ')})`,
        descriptor.id,
      );
    const requested: (readonly (string | number)[])[] = [];
    (descriptor.constraints.fields ?? []).forEach((field, k) => {
      const outcome = evaluateField(field, credential.claims);
      if (outcome.ok) requested.push(outcome.path!);
      else if (!field.optional)
        throw new PresentationInvalidError(
          'constraints_not_met',
          `input descriptor '${descriptor.id}', field ${field.name ?? field.id ?? k}: ${outcome.reason}`,
          descriptor.id,
        );
    });
    if (descriptor.constraints.limit_disclosure === 'required') {
      const extras = uncovered(credential.disclosedPaths, requested);
      if (extras.length > 0)
        throw new PresentationInvalidError(
          'extra_disclosure',
          `input descriptor '${descriptor.id}' has limit_disclosure required, but ${extras.map(toPointer).join(', ')} was disclosed beyond its fields`,
          descriptor.id,
        );
    }
    out[descriptor.id] = matched(credential);
  });
  return out;
}

/**
 * For a DCQL request translated from a definition (credential query ids = descriptor ids): the DCQL
 * answer must satisfy the query, and the original PE constraints (patterns, ranges … that DCQL could
 * not carry) are re-checked on the verified claims.
 */
export function matchDcqlForDefinition(
  definition: PresentationDefinition,
  query: DcqlQuery,
  presented: Readonly<Record<string, readonly VerifiedCredential[]>>,
): MatchedCredentials {
  const strictIds = new Set(definition.input_descriptors.filter((d) => d.constraints.limit_disclosure === 'required').map((d) => d.id));
  matchDcql(query, presented, { strict: (id) => strictIds.has(id) });
  const single = Object.fromEntries(Object.entries(presented).flatMap(([id, list]) => (list[0] ? [[id, list[0]] as const] : [])));
  return matchDefinition(definition, single);
}

export interface SubmissionLocation {
  readonly descriptorId: string;
  /** The descriptor_map entry's format: of the vp_token element (a VP envelope for nested credentials). */
  readonly format: string;
  readonly tokenIndex: number;
  /** A credential inside a VP: its format and index in verifiableCredential. */
  readonly nested?: { readonly format: string; readonly index: number };
}

const invalid = (detail: string, id?: string): PresentationInvalidError => new PresentationInvalidError('invalid_submission', detail, id);

/** The payload of a compact JWT, when the token is one (only to bound nested indexes). */
function jwtPayload(token: unknown): Record<string, unknown> | undefined {
  if (typeof token !== 'string') return isObject(token) ? token : undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    return isObject(payload) ? payload : undefined;
  } catch {
    return undefined;
  }
}

const VP_FORMATS = new Set(['jwt_vp_json', 'jwt_vp']);
const JWT_VC_FORMATS = new Set(['jwt_vc_json', 'jwt_vc']);
const SD_JWT_FORMATS = new Set(['vc+sd-jwt', 'dc+sd-jwt']);

/**
 * Where each descriptor's credential is in the vp_token, per a PE presentation_submission (draft
 * wallets): `$` for a single token or `$[i]`; JWT VCs inside a jwt_vp(_json) at
 * `$.vp.verifiableCredential[i]` (or `$.verifiableCredential[i]`). Throws invalid_submission.
 */
export function locateSubmission(definition: PresentationDefinition, submission: unknown, vpTokens: readonly unknown[]): SubmissionLocation[] {
  if (!isObject(submission)) throw invalid('presentation_submission must be a JSON object');
  if (submission.definition_id !== definition.id)
    throw invalid(`presentation_submission.definition_id ${JSON.stringify(submission.definition_id)} is not '${definition.id}'`);
  const map = submission.descriptor_map;
  if (!Array.isArray(map) || map.length === 0) throw invalid('presentation_submission.descriptor_map must be a non-empty array');
  if (vpTokens.length === 0) throw invalid('the vp_token is empty');

  const seen = new Set<string>();
  return map.map((entry: unknown, n): SubmissionLocation => {
    const at = `descriptor_map[${n}]`;
    if (!isObject(entry)) throw invalid(`${at} must be an object`);
    const index = definition.input_descriptors.findIndex((d) => d.id === entry.id);
    const descriptor = definition.input_descriptors[index];
    if (!descriptor) throw invalid(`${at}.id ${JSON.stringify(entry.id)} is not an input descriptor of definition '${definition.id}'`);
    const id = descriptor.id;
    if (seen.has(id)) throw invalid(`${at}: input descriptor '${id}' is mapped more than once`, id);
    seen.add(id);

    const format = entry.format;
    if (typeof format !== 'string' || !isPeFormat(format)) throw invalid(`${at}.format ${JSON.stringify(format)} is not a supported format`, id);
    const tokenIndex = tokenIndexOf(entry.path, vpTokens.length);
    if (tokenIndex === undefined)
      throw invalid(`${at}.path ${JSON.stringify(entry.path)} must be '$' (a single vp_token) or '$[i]' within the ${vpTokens.length} vp_token element(s)`, id);
    const families = allowedFamilies(definition, index, descriptor);
    const allows = (f: string) => !families || (isPeFormat(f) && families.has(familyOf(f)));

    if (SD_JWT_FORMATS.has(format) || JWT_VC_FORMATS.has(format)) {
      if (entry.path_nested !== undefined) throw invalid(`${at}.path_nested is only allowed in a jwt_vp_json presentation`, id);
      if (!allows(format)) throw invalid(`${at}.format '${format}' is not allowed by input descriptor '${id}'`, id);
      return { descriptorId: id, format, tokenIndex };
    }
    // A VP envelope: the credential inside decides what the descriptor must allow.
    if (!VP_FORMATS.has(format)) throw invalid(`${at}.format '${format}' cannot hold a nested credential`, id);
    const nested = entry.path_nested;
    if (!isObject(nested)) throw invalid(`${at}.path_nested is required for ${format}: it locates the credential inside the presentation`, id);
    if (nested.path_nested !== undefined) throw invalid(`${at}.path_nested.path_nested: deeper nesting is not supported`, id);
    if (nested.id !== undefined && nested.id !== id) throw invalid(`${at}.path_nested.id must be '${id}'`, id);
    if (typeof nested.format !== 'string' || !JWT_VC_FORMATS.has(nested.format))
      throw invalid(`${at}.path_nested.format must be jwt_vc_json (or jwt_vc) inside ${format}`, id);
    if (!allows(nested.format)) throw invalid(`${at}.path_nested.format '${nested.format}' is not allowed by input descriptor '${id}'`, id);
    const m = typeof nested.path === 'string' ? /^\$(?:\.vp)?\.verifiableCredential\[(\d+)\]$/.exec(nested.path) : null;
    if (!m) throw invalid(`${at}.path_nested.path ${JSON.stringify(nested.path)} must be '$.vp.verifiableCredential[i]' or '$.verifiableCredential[i]'`, id);
    const nestedIndex = Number(m[1]);
    const payload = jwtPayload(vpTokens[tokenIndex]);
    const vp = payload && (isObject(payload.vp) ? payload.vp : payload);
    const vcs = vp?.verifiableCredential;
    if (Array.isArray(vcs) && nestedIndex >= vcs.length)
      throw invalid(`${at}.path_nested.path points at credential ${nestedIndex}, but the presentation holds ${vcs.length}`, id);
    return { descriptorId: id, format, tokenIndex, nested: { format: nested.format, index: nestedIndex } };
  });
}

function tokenIndexOf(path: unknown, count: number): number | undefined {
  if (path === '$') return count === 1 ? 0 : undefined;
  const m = typeof path === 'string' ? /^\$\[(\d+)\]$/.exec(path) : null;
  if (!m) return undefined;
  const i = Number(m[1]);
  return i < count ? i : undefined;
}
