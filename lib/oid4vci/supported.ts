import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from '../http/errors';
import { prefixPage } from '../http/paging';
import { issuerVersionBump, keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemStore } from '../store/port';
import {
  oid4vciKeys,
  SK,
  type ClaimLeaf,
  type ClaimTree,
  type DisplayEntry,
  type IssuableConfiguration,
  type SupportedCredentialRecord,
  type SupportedFormat,
} from './records';

/**
 * Supported-credential records (contract 2.1): how each create endpoint stores its body, the checks
 * a record must pass, and the one normalised view (`issuableConfiguration`) issuance and the issuer
 * metadata read, whichever endpoint stored it.
 */

/** `value_type`s a claim leaf may declare (OID4VCI draft 13 Appendix A, plus what ACA-Py's issuers use); also any `image/<subtype>`. */
export const VALUE_TYPES = ['string', 'number', 'integer', 'boolean', 'date', 'date-time', 'object', 'array', 'image'] as const;
const IMAGE_MEDIA_TYPE = /^image\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

function isValueType(v: string): boolean {
  return (VALUE_TYPES as readonly string[]).includes(v) || IMAGE_MEDIA_TYPE.test(v);
}

/** Claims SD-JWT VC (section 3.2.2) keeps in the clear: never selectively disclosable; `cnf` and `status` with all they contain. */
const CLEAR_CLAIMS = ['iss', 'nbf', 'exp', 'iat', 'cnf', 'vct', 'vct#integrity', 'status'] as const;
const CLEAR_SUBTREES = ['cnf', 'status'] as const;
/** Names SD-JWT reserves inside any object of the payload. */
const SD_RESERVED_NAMES = ['_sd', '_sd_alg', '...'] as const;

const VC_CONTEXTS = ['https://www.w3.org/2018/credentials/v1', 'https://www.w3.org/ns/credentials/v2'] as const;

/** Deeper claim trees are refused: real credentials nest a few levels, and the checks recurse. */
const MAX_CLAIM_DEPTH = 16;

export const isSdJwt = (f: SupportedFormat): f is 'vc+sd-jwt' | 'dc+sd-jwt' => f === 'vc+sd-jwt' || f === 'dc+sd-jwt';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nesting a stored JSON value may have: DynamoDB allows 32 levels per item, and events wrap the value in a few more. */
const MAX_JSON_DEPTH = 24;

/** What DynamoDB would refuse in free-form JSON (an empty map key, nesting past its limit), as 400s rather than 500s. */
export function unstorable(value: unknown, path: string, out: ErrorDetail[] = [], depth = 1): ErrorDetail[] {
  if (typeof value !== 'object' || value === null) return out;
  if (depth > MAX_JSON_DEPTH) {
    out.push({ path, message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
    return out;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => unstorable(v, `${path}.${i}`, out, depth + 1));
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === '') out.push({ path: `${path}.`, message: 'an empty member name cannot be stored' });
    else unstorable(v, `${path}.${k}`, out, depth + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON pointers (RFC 6901)

/** The reference tokens of a pointer, unescaped; null when it is not a pointer into a claim (`/…`, only `~0` / `~1` escapes). */
export function parsePointer(pointer: string): string[] | null {
  if (!pointer.startsWith('/') || /~(?![01])/.test(pointer)) return null;
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function toPointer(tokens: readonly string[]): string {
  return tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

// ---------------------------------------------------------------------------------------------
// Claim trees

const LEAF_KEYS = new Set(['mandatory', 'value_type', 'display']);

/**
 * A leaf describes one claim: only `mandatory` (boolean), `value_type` (string) and `display`
 * (array), each optional, so `{}` is a leaf too. Any other object is a group of further claims.
 */
export function isClaimLeaf(node: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(node).every(
    ([k, v]) =>
      LEAF_KEYS.has(k) &&
      ((k === 'mandatory' && typeof v === 'boolean') || (k === 'value_type' && typeof v === 'string') || (k === 'display' && Array.isArray(v))),
  );
}

function checkDisplay(value: unknown, path: string, out: ErrorDetail[]): void {
  if (!Array.isArray(value)) {
    out.push({ path, message: 'must be an array of display objects' });
    return;
  }
  value.forEach((entry, i) => {
    const at = `${path}.${i}`;
    if (!isObject(entry)) {
      out.push({ path: at, message: 'must be an object' });
      return;
    }
    for (const k of ['name', 'locale', 'text_color', 'background_color', 'description'] as const) {
      if (entry[k] !== undefined && typeof entry[k] !== 'string') out.push({ path: `${at}.${k}`, message: 'must be a string' });
    }
    if (entry.logo === undefined) return;
    if (!isObject(entry.logo)) {
      out.push({ path: `${at}.logo`, message: 'must be an object (url or uri, alt_text)' });
      return;
    }
    for (const k of ['url', 'uri', 'alt_text'] as const) {
      if (entry.logo[k] !== undefined && typeof entry.logo[k] !== 'string') out.push({ path: `${at}.logo.${k}`, message: 'must be a string' });
    }
  });
}

function checkClaimTree(tree: unknown, path: string, sdJwt: boolean, out: ErrorDetail[], depth = 1): void {
  if (!isObject(tree)) {
    out.push({ path, message: 'must be an object keyed by claim name' });
    return;
  }
  if (depth > MAX_CLAIM_DEPTH) {
    out.push({ path, message: `claims nest at most ${MAX_CLAIM_DEPTH} levels` });
    return;
  }
  for (const [name, node] of Object.entries(tree)) {
    const at = `${path}.${name}`;
    if (name === '') out.push({ path: at, message: 'a claim name must not be empty' });
    if (sdJwt && (SD_RESERVED_NAMES as readonly string[]).includes(name)) out.push({ path: at, message: `${name} is reserved by SD-JWT` });
    if (sdJwt && depth === 1 && (CLEAR_CLAIMS as readonly string[]).includes(name)) {
      out.push({ path: at, message: `${name} is set by the issuer (SD-JWT VC), not a subject claim` });
    }
    if (!isObject(node)) {
      out.push({ path: at, message: 'must be an object: a claim {mandatory?, value_type?, display?} or a group of claims' });
      continue;
    }
    if (isClaimLeaf(node)) {
      const vt = node.value_type as string | undefined;
      if (vt !== undefined && !isValueType(vt)) {
        out.push({ path: `${at}.value_type`, message: `unknown value_type; one of ${VALUE_TYPES.join(', ')} or an image/<subtype> media type` });
      }
      if (node.display !== undefined) checkDisplay(node.display, `${at}.display`, out);
    } else {
      checkClaimTree(node, at, sdJwt, out, depth + 1);
    }
  }
}

/** Whether a pointer names a node of a claim tree (a group or a leaf). */
function hasNode(tree: ClaimTree, tokens: readonly string[]): boolean {
  let node: Readonly<Record<string, unknown>> = tree;
  for (const t of tokens) {
    if (isClaimLeaf(node) || !Object.hasOwn(node, t) || !isObject(node[t])) return false;
    node = node[t] as Record<string, unknown>;
  }
  return true;
}

function checkSdList(value: unknown, path: string, claims: unknown, out: ErrorDetail[]): void {
  if (!Array.isArray(value)) {
    out.push({ path, message: 'must be an array of JSON pointers' });
    return;
  }
  const seen = new Set<string>();
  value.forEach((entry, i) => {
    const at = `${path}.${i}`;
    if (typeof entry !== 'string') {
      out.push({ path: at, message: 'must be a JSON pointer string' });
      return;
    }
    const tokens = parsePointer(entry);
    if (!tokens) {
      out.push({ path: at, message: `${JSON.stringify(entry)} is not a JSON pointer to a claim (RFC 6901: "/name/…", "~0" for "~", "~1" for "/")` });
      return;
    }
    if (seen.has(entry)) out.push({ path: at, message: `${entry} is listed twice` });
    seen.add(entry);
    const top = tokens[0]!;
    if ((CLEAR_SUBTREES as readonly string[]).includes(top) || (tokens.length === 1 && (CLEAR_CLAIMS as readonly string[]).includes(top))) {
      const what = tokens.length > 1 ? `/${top} and all under it` : entry;
      out.push({ path: at, message: `${entry} may not be selectively disclosable: SD-JWT VC keeps ${what} in the clear` });
      return;
    }
    if (isObject(claims) && !hasNode(claims as ClaimTree, tokens)) out.push({ path: at, message: `${entry} names no claim of the claims tree` });
  });
}

function checkStringList(value: unknown, path: string, out: ErrorDetail[]): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) out.push({ path, message: 'must be an array of strings' });
}

// ---------------------------------------------------------------------------------------------
// The three create endpoints

/** Where each part of a draft came from in the request, for error paths. */
interface DraftPaths {
  readonly vct: string;
  readonly claims: string;
  readonly sdList: string;
  readonly order: string;
  readonly types: string;
  readonly context: string;
}

/** A record about to be stored. */
export type SupportedDraft = Omit<SupportedCredentialRecord, 'supported_cred_id' | 'wallet_id' | 'created_at' | 'updated_at'> & { readonly paths: DraftPaths };

interface CommonInput {
  readonly id: string;
  readonly cryptographic_binding_methods_supported?: string[] | null | undefined;
  readonly cryptographic_suites_supported?: string[] | null | undefined;
  readonly display?: DisplayEntry[] | null | undefined;
}

const common = (b: CommonInput) => ({
  identifier: b.id,
  cryptographic_binding_methods_supported: b.cryptographic_binding_methods_supported ?? null,
  cryptographic_suites_supported: b.cryptographic_suites_supported ?? null,
  display: b.display ?? null,
});

/** The generic endpoint stores its body as given: what sits in format_data stays there, absent top-level fields are null. */
export function draftFromGeneric(
  b: CommonInput & { format: SupportedFormat; format_data?: Record<string, unknown> | null | undefined; vc_additional_data?: Record<string, unknown> | null | undefined },
): SupportedDraft {
  const inAdditional = (k: string) => b.vc_additional_data?.[k] !== undefined;
  return {
    ...common(b),
    format: b.format,
    format_data: b.format_data ?? null,
    vc_additional_data: b.vc_additional_data ?? null,
    paths: {
      vct: 'format_data.vct',
      claims: isSdJwt(b.format) ? 'format_data.claims' : 'format_data.credentialSubject',
      sdList: 'vc_additional_data.sd_list',
      order: 'format_data.order',
      types: inAdditional('type') ? 'vc_additional_data.type' : 'format_data.types',
      context: inAdditional('@context') ? 'vc_additional_data.@context' : 'format_data.context',
    },
  };
}

/** `/sd-jwt`: format_data {vct, order, claims}, vc_additional_data {sd_list}; the rest top-level as supplied. */
export function draftFromSdJwt(
  b: CommonInput & { format?: 'vc+sd-jwt' | 'dc+sd-jwt' | undefined; vct: string; claims: Record<string, unknown>; order?: string[] | null | undefined; sd_list?: string[] | null | undefined },
): SupportedDraft {
  return {
    ...common(b),
    format: b.format ?? 'vc+sd-jwt',
    format_data: { vct: b.vct, order: b.order ?? null, claims: b.claims },
    vc_additional_data: { sd_list: b.sd_list ?? [] },
    paths: { vct: 'vct', claims: 'claims', sdList: 'sd_list', order: 'order', types: 'type', context: '@context' },
  };
}

/** `/jwt`: format_data {order, types, context, credentialSubject}, vc_additional_data {type, @context}; a single `type` string becomes a list. */
export function draftFromJwt(
  b: CommonInput & { format?: 'jwt_vc_json' | undefined; type: string | string[]; '@context': string[]; credentialSubject: Record<string, unknown>; order?: string[] | null | undefined },
): SupportedDraft {
  const types = typeof b.type === 'string' ? [b.type] : b.type;
  return {
    ...common(b),
    format: b.format ?? 'jwt_vc_json',
    format_data: { order: b.order ?? null, types, context: b['@context'], credentialSubject: b.credentialSubject },
    vc_additional_data: { type: types, '@context': b['@context'] },
    paths: { vct: 'vct', claims: 'credentialSubject', sdList: 'sd_list', order: 'order', types: 'type', context: '@context' },
  };
}

/** Every problem of a draft, each naming where in the request it is. */
export function validateDraft(d: SupportedDraft): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const fd = d.format_data ?? {};
  const ad = d.vc_additional_data ?? {};
  const p = d.paths;
  unstorable(d.format_data, 'format_data', out);
  unstorable(d.vc_additional_data, 'vc_additional_data', out);
  unstorable(d.display, 'display', out);
  if (out.length) return out;
  if (d.display) checkDisplay(d.display, 'display', out);
  if (fd.display !== undefined) checkDisplay(fd.display, 'format_data.display', out);
  checkStringList(fd.cryptographic_binding_methods_supported, 'format_data.cryptographic_binding_methods_supported', out);
  checkStringList(fd.cryptographic_suites_supported, 'format_data.cryptographic_suites_supported', out);
  checkStringList(fd.order, p.order, out);
  if (isSdJwt(d.format)) {
    if (typeof fd.vct !== 'string' || fd.vct.length === 0) out.push({ path: p.vct, message: 'SD-JWT VC needs vct, a non-empty string' });
    if (fd.claims === undefined) out.push({ path: p.claims, message: 'required: the claims a subject may carry (may be {})' });
    else checkClaimTree(fd.claims, p.claims, true, out);
    if (ad.sd_list !== undefined && ad.sd_list !== null) checkSdList(ad.sd_list, p.sdList, fd.claims, out);
    return out;
  }
  const types = ad.type ?? fd.types;
  const list = typeof types === 'string' ? [types] : types;
  if (!Array.isArray(list) || !list.every((t) => typeof t === 'string')) out.push({ path: p.types, message: 'required: the credential types, a string array' });
  else if (!list.includes('VerifiableCredential')) out.push({ path: p.types, message: 'must include VerifiableCredential' });
  const context = ad['@context'] ?? fd.context;
  if (!Array.isArray(context) || context.length === 0 || !context.every((c) => typeof c === 'string')) {
    out.push({ path: p.context, message: 'required: the JSON-LD contexts, a non-empty string array' });
  } else if (!(VC_CONTEXTS as readonly string[]).includes(context[0] as string)) {
    out.push({ path: p.context, message: `must start with ${VC_CONTEXTS.join(' or ')}` });
  }
  if (fd.credentialSubject === undefined) out.push({ path: p.claims, message: 'required: the subject attributes a credential may carry (may be {})' });
  else checkClaimTree(fd.credentialSubject, p.claims, false, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading records

export function supportedFromItem(item: Item): SupportedCredentialRecord {
  return {
    supported_cred_id: item.supported_cred_id as string,
    wallet_id: item.wallet_id as string,
    identifier: item.identifier as string,
    format: item.format as SupportedFormat,
    format_data: (item.format_data as Record<string, unknown> | null | undefined) ?? null,
    vc_additional_data: (item.vc_additional_data as Record<string, unknown> | null | undefined) ?? null,
    cryptographic_binding_methods_supported: (item.cryptographic_binding_methods_supported as string[] | null | undefined) ?? null,
    cryptographic_suites_supported: (item.cryptographic_suites_supported as string[] | null | undefined) ?? null,
    display: (item.display as DisplayEntry[] | null | undefined) ?? null,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/** The supported-credential item's attribute that says whether a status-list definition was ever bound to it. */
export const STATUS_BOUND = 'status_bound';

/** The configuration of a supported-credential item, with what the item knows about status-list bindings. */
export function configurationFromItem(item: Item): IssuableConfiguration {
  const bound = item[STATUS_BOUND];
  return { ...issuableConfiguration(supportedFromItem(item)), ...(typeof bound === 'boolean' ? { statusListsBound: bound } : {}) };
}

const strings = (v: unknown): string[] | undefined => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** What issuance and the metadata need, from any of the three storage shapes (top-level copies first, then format_data). */
export function issuableConfiguration(r: SupportedCredentialRecord): IssuableConfiguration {
  const fd = r.format_data ?? {};
  const ad = r.vc_additional_data ?? {};
  const sd = isSdJwt(r.format);
  return {
    id: r.identifier,
    supportedCredId: r.supported_cred_id,
    format: r.format,
    ...(sd && typeof fd.vct === 'string' ? { vct: fd.vct } : {}),
    ...(!sd ? { types: strings(ad.type ?? fd.types) ?? [], context: strings(ad['@context'] ?? fd.context) ?? [] } : {}),
    claims: ((sd ? fd.claims : fd.credentialSubject) as ClaimTree | undefined) ?? {},
    sdList: sd ? (strings(ad.sd_list) ?? []) : [],
    order: strings(fd.order) ?? null,
    display: r.display ?? (Array.isArray(fd.display) ? (fd.display as DisplayEntry[]) : null),
    bindingMethods: r.cryptographic_binding_methods_supported ?? strings(fd.cryptographic_binding_methods_supported) ?? null,
    signingAlgs: r.cryptographic_suites_supported ?? strings(fd.cryptographic_suites_supported) ?? strings(fd.credential_signing_alg_values_supported) ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Subjects

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function isIsoDate(v: unknown): boolean {
  const m = typeof v === 'string' ? ISO_DATE.exec(v) : null;
  if (!m) return false;
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).toISOString().slice(0, 10) === v;
}

/** Why a value does not fit a declared value_type (null: it fits); a type this service does not know accepts anything. */
function valueTypeProblem(valueType: string | undefined, v: unknown): string | null {
  switch (valueType) {
    case undefined:
      return null;
    case 'string':
      return typeof v === 'string' ? null : 'must be a string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number';
    case 'integer':
      return Number.isInteger(v) ? null : 'must be an integer';
    case 'boolean':
      return typeof v === 'boolean' ? null : 'must be a boolean';
    case 'date':
      return isIsoDate(v) ? null : 'must be an ISO 8601 date (YYYY-MM-DD)';
    case 'date-time':
      return typeof v === 'string' && ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)) ? null : 'must be an ISO 8601 date-time with a time zone';
    case 'object':
      return isObject(v) ? null : 'must be an object';
    case 'array':
      return Array.isArray(v) ? null : 'must be an array';
    default:
      if (valueType === 'image' || IMAGE_MEDIA_TYPE.test(valueType)) return typeof v === 'string' ? null : 'must be a string (a URL or data: URI of the image)';
      return null;
  }
}

/** Pointers of the mandatory leaves under a node, for a subject that left it out. */
function mandatoryUnder(node: Readonly<Record<string, unknown>>, at: string[], out: string[][]): void {
  if (isClaimLeaf(node)) {
    if ((node as ClaimLeaf).mandatory === true) out.push(at);
    return;
  }
  for (const [k, child] of Object.entries(node)) if (isObject(child)) mandatoryUnder(child, [...at, k], out);
}

function checkSubject(tree: ClaimTree, value: Record<string, unknown>, at: string[], out: ErrorDetail[], alsoAllowed: ReadonlySet<string>): void {
  for (const [name, node] of Object.entries(tree)) {
    if (!isObject(node)) continue;
    const here = [...at, name];
    const pointer = toPointer(here);
    const v = Object.hasOwn(value, name) ? value[name] : undefined;
    if (v === undefined || v === null) {
      const missing: string[][] = [];
      mandatoryUnder(node, here, missing);
      for (const m of missing) out.push({ path: toPointer(m), message: `${toPointer(m)}: mandatory claim missing` });
      if (v === null && missing.length === 0) out.push({ path: pointer, message: `${pointer}: null is not a value (leave an optional claim out)` });
      continue;
    }
    if (isClaimLeaf(node)) {
      const problem = valueTypeProblem((node as ClaimLeaf).value_type, v);
      if (problem) out.push({ path: pointer, message: `${pointer}: ${problem}` });
      continue;
    }
    // A group; numeric keys also describe the items of an array.
    const inner = Array.isArray(v) ? Object.fromEntries(v.map((x, i) => [String(i), x])) : v;
    if (!isObject(inner)) {
      out.push({ path: pointer, message: `${pointer}: must be an object (a group of claims)` });
      continue;
    }
    checkSubject(node as ClaimTree, inner, here, out, new Set());
  }
  for (const name of Object.keys(value)) {
    if (Object.hasOwn(tree, name) || alsoAllowed.has(name)) continue;
    const pointer = toPointer([...at, name]);
    out.push({ path: pointer, message: `${pointer}: unknown claim (not in the supported credential's claims)` });
  }
}

/**
 * A credential subject against the configuration's claims: missing mandatory claims, claims the
 * configuration does not describe, values of the wrong value_type, recursively through groups. Each
 * problem's path is the claim's JSON pointer. jwt_vc_json subjects may also carry `id` (the subject's DID).
 */
export function validateSubject(config: IssuableConfiguration, subject: Record<string, unknown>): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  checkSubject(config.claims, subject, [], out, new Set(isSdJwt(config.format) ? [] : ['id']));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The service

export interface SupportedFilters {
  readonly supported_cred_id?: string | undefined;
  readonly format?: SupportedFormat | undefined;
  readonly identifier?: string | undefined;
}

export interface SupportedServiceDeps {
  readonly store: ItemStore;
  readonly now?: () => Date;
}

function matches(r: SupportedCredentialRecord, f: SupportedFilters): boolean {
  return (
    (f.supported_cred_id === undefined || r.supported_cred_id === f.supported_cred_id) &&
    (f.format === undefined || r.format === f.format) &&
    (f.identifier === undefined || r.identifier === f.identifier)
  );
}

export const supportedNotFound = (id: string) => new NotFoundError(`No supported credential ${id} in this wallet`, 'supported_credential_not_found');

export class SupportedCredentialService {
  private readonly now: () => Date;

  constructor(private readonly deps: SupportedServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Stores a valid draft; its identifier is reserved in the same transaction, so it is unique per wallet. */
  async create(scope: TenantScope, draft: SupportedDraft): Promise<SupportedCredentialRecord> {
    const problems = validateDraft(draft);
    if (problems.length) throw new ValidationError(problems, 'The supported credential is not valid');
    const at = this.now().toISOString();
    const { paths: _paths, ...fields } = draft;
    const record: SupportedCredentialRecord = { supported_cred_id: randomUUID(), wallet_id: scope.walletId, ...fields, created_at: at, updated_at: at };
    try {
      await this.deps.store.write([
        { type: 'put', item: { ...oid4vciKeys.supportedIdentifier(scope, record.identifier), type: 'oid4vci_supported_identifier', supported_cred_id: record.supported_cred_id }, condition: 'not_exists' },
        // status_bound: no status-list definition yet (IssuableConfiguration.statusListsBound); not part of the record's view.
        { type: 'put', item: { ...oid4vciKeys.supported(scope, record.supported_cred_id), type: 'oid4vci_supported', ...record, [STATUS_BOUND]: false }, condition: 'not_exists' },
        // The issuer metadata lists it: instances that keep the document see the change (lib/store/keys.ts).
        issuerVersionBump(scope),
      ]);
    } catch (err) {
      if (err instanceof ConditionFailedError && err.failedIndexes.includes(0)) {
        throw new ConflictError(`This wallet already has a supported credential with id "${record.identifier}"`, 'identifier_taken');
      }
      throw err;
    }
    return record;
  }

  async get(scope: TenantScope, id: string): Promise<SupportedCredentialRecord> {
    const item = await this.deps.store.get(oid4vciKeys.supported(scope, id));
    if (!item) throw supportedNotFound(id);
    return supportedFromItem(item);
  }

  async list(scope: TenantScope, filters: SupportedFilters = {}): Promise<SupportedCredentialRecord[]> {
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: SK.supported });
    return items.map(supportedFromItem).filter((r) => matches(r, filters));
  }

  /** One page; with filters a page may hold fewer than `limit` (follow `next`). */
  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }, filters: SupportedFilters = {}) {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), SK.supported, page);
    return { items: out.items.map(supportedFromItem).filter((r) => matches(r, filters)), next: out.next };
  }

  /** Deletes the record and frees its identifier. Exchanges already offered for it stay, but can no longer be issued. */
  async delete(scope: TenantScope, id: string): Promise<void> {
    const record = await this.get(scope, id);
    const own = { type: 'delete', key: oid4vciKeys.supported(scope, id), condition: 'exists' } as const;
    try {
      // The identifier is freed only if it is still this record's.
      await this.deps.store.write([own, { type: 'delete', key: oid4vciKeys.supportedIdentifier(scope, record.identifier), condition: { equals: { supported_cred_id: id } } }, issuerVersionBump(scope)]);
    } catch (err) {
      // Record and reservation are written and deleted together: a failed condition means it is gone.
      throw err instanceof ConditionFailedError ? supportedNotFound(id) : err;
    }
  }
}
