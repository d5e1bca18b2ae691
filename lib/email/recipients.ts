import type { ErrorDetail } from '../http/errors';
import { CODE_LIFETIME } from '../oid4vci/exchanges';
import type { ClaimLeaf, ClaimTree, IssuableConfiguration, SupportedCredentialRecord } from '../oid4vci/records';
import { isClaimLeaf, isSdJwt, issuableConfiguration, parsePointer, validateSubject } from '../oid4vci/supported';

/**
 * Planning a bulk email request (contract 4.1) before anything is sent: each entry is an invalid
 * address, a failure (with a reason code and details), or a recipient with the credential subject
 * built from its attributes. Pure: the caller loads the wallet's supported credentials once.
 */

/** Largest request (entries) and longest offer (days): an offer lives as long as a pre-authorized code may. */
export const BULK_LIMITS = { maxEntries: 10_000, maxDaysToAccept: CODE_LIFETIME.max / 86400 } as const;

export interface EmailEntry {
  readonly email: string;
  readonly schema_id: string;
  readonly time_to_accept: number;
  readonly attributes: readonly { readonly name: string; readonly value: string }[];
}

export interface PlannedRecipient {
  /** The address as it will be sent to: trimmed, domain in lower case. */
  readonly email: string;
  /** The address as the request gave it (what the response arrays list). */
  readonly given: string;
  /** The entry's position in the request: its record's index, stable across repeats. */
  readonly position: number;
  /** The request's `schema_id` (a supported_cred_id or an identifier). */
  readonly schemaId: string;
  readonly supportedCredId: string;
  readonly configuration: IssuableConfiguration;
  readonly credentialSubject: Record<string, unknown>;
  /** Lifetime of the offer's pre-authorized code, in seconds. */
  readonly expiresIn: number;
}

export type FailureReason = 'unknown_schema' | 'invalid_attributes' | 'invalid_time_to_accept' | 'duplicate_address';

export interface PlannedFailure {
  readonly email: string;
  readonly position: number;
  readonly schemaId: string;
  readonly reason: FailureReason;
  readonly message: string;
  readonly details: readonly ErrorDetail[];
}

export interface Plan {
  readonly recipients: PlannedRecipient[];
  readonly failures: PlannedFailure[];
  readonly invalidEmails: string[];
}

// WHATWG HTML's "valid e-mail address", plus a dot in the domain (mail to a bare host name is never what is meant).
const LOCAL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+$/;
const LABEL = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

/** The address to send to (trimmed, domain lower-cased), or null when it is not one. */
export function normaliseAddress(raw: string): string | null {
  const s = raw.trim();
  if (s.length === 0 || s.length > 254) return null;
  const at = s.lastIndexOf('@');
  if (at <= 0 || at === s.length - 1) return null;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^[0-9]+$/.test(labels.at(-1)!)) return null;
  return `${local}@${domain}`;
}

function leafAt(claims: ClaimTree, segments: readonly string[]): ClaimLeaf | null | undefined {
  let node: ClaimTree | ClaimLeaf = claims;
  for (const seg of segments) {
    if (isClaimLeaf(node as Record<string, unknown>)) return undefined;
    const next: ClaimTree | ClaimLeaf | undefined = (node as ClaimTree)[seg];
    if (next === undefined) return undefined;
    node = next;
  }
  return isClaimLeaf(node as Record<string, unknown>) ? (node as ClaimLeaf) : null;
}

/** An attribute's text as the claim's declared type; undefined (with a problem) when it does not read as one. */
function typed(leaf: ClaimLeaf, text: string): { value?: unknown; problem?: string } {
  switch (leaf.value_type) {
    case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? { value: n } : { problem: 'must be a number' };
    }
    case 'integer': {
      const n = Number(text);
      return /^-?[0-9]+$/.test(text.trim()) && Number.isSafeInteger(n) ? { value: n } : { problem: 'must be an integer' };
    }
    case 'boolean':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : { problem: 'must be true or false' };
    case 'object':
    case 'array':
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { problem: `must be JSON (${leaf.value_type})` };
      }
    default:
      // Strings, dates, images: the text itself (validateSubject checks dates' form).
      return { value: text };
  }
}

/**
 * The credential subject an entry's attributes make: a `name` is a top-level claim, or a JSON pointer
 * (`/address/street`) for a nested one; each value is read as its claim's `value_type`. Then the same
 * checks as `POST /api/v1/oid4vci/issue` (mandatory, unknown, types).
 */
export function subjectOf(config: IssuableConfiguration, attributes: EmailEntry['attributes']): { subject: Record<string, unknown>; problems: ErrorDetail[] } {
  const subject: Record<string, unknown> = {};
  const problems: ErrorDetail[] = [];
  const seen = new Set<string>();
  attributes.forEach((a, i) => {
    const segments = a.name.startsWith('/') ? parsePointer(a.name) : [a.name];
    const path = `attributes.${i}`;
    if (!segments || segments.some((s) => s === '')) return problems.push({ path: `${path}.name`, message: `${a.name} is not a claim name or JSON pointer` });
    const key = segments.join('/');
    if (seen.has(key)) return problems.push({ path: `${path}.name`, message: `${a.name} is given twice` });
    seen.add(key);
    const leaf = leafAt(config.claims, segments);
    // jwt_vc_json subjects may carry their `id` (validateSubject allows it).
    if (leaf === undefined && !(segments.length === 1 && segments[0] === 'id' && !isSdJwt(config.format))) {
      return problems.push({ path: `${path}.name`, message: `${a.name} is not a claim of ${config.id}` });
    }
    const { value, problem } = leaf ? typed(leaf, a.value) : { value: a.value, problem: undefined };
    if (problem) return problems.push({ path: `${path}.value`, message: `${a.name} ${problem}` });
    let node = subject;
    segments.slice(0, -1).forEach((s) => {
      node[s] = (node[s] as Record<string, unknown> | undefined) ?? {};
      node = node[s] as Record<string, unknown>;
    });
    node[segments.at(-1)!] = value;
    return undefined;
  });
  if (problems.length === 0) problems.push(...validateSubject(config, subject).map((d) => ({ path: `attributes${d.path}`, message: d.message })));
  return { subject, problems };
}

/** `schema_id` is a supported credential's `supported_cred_id`, or its `identifier` (the configuration id wallets see). */
export function supportedIndex(records: readonly SupportedCredentialRecord[]): (schemaId: string) => SupportedCredentialRecord | undefined {
  const byId = new Map(records.map((r) => [r.supported_cred_id, r]));
  const byIdentifier = new Map(records.map((r) => [r.identifier, r]));
  return (schemaId) => byId.get(schemaId) ?? byIdentifier.get(schemaId);
}

const failureOf = (entry: EmailEntry, position: number) => (reason: FailureReason, message: string, details: readonly ErrorDetail[] = []): PlannedFailure => ({ email: entry.email, position, schemaId: entry.schema_id, reason, message, details });

/** Every entry checked before anything is sent; the same address twice is sent once. */
export function planRecipients(entries: readonly EmailEntry[], findSupported: (schemaId: string) => SupportedCredentialRecord | undefined): Plan {
  const plan: Plan = { recipients: [], failures: [], invalidEmails: [] };
  const taken = new Map<string, EmailEntry>();
  const configs = new Map<string, IssuableConfiguration>();
  for (const [position, entry] of entries.entries()) {
    const failure = failureOf(entry, position);
    const email = normaliseAddress(entry.email);
    if (email === null) {
      plan.invalidEmails.push(entry.email);
      continue;
    }
    const key = email.toLowerCase();
    const first = taken.get(key);
    if (first) {
      const same = first.schema_id === entry.schema_id && first.time_to_accept === entry.time_to_accept && JSON.stringify(first.attributes) === JSON.stringify(entry.attributes);
      // An exact repeat is the same offer (sent once); a different one to the same address is refused, not silently dropped.
      if (!same) plan.failures.push(failure('duplicate_address', `${email} appears more than once in this request with different offers; one email per address`));
      continue;
    }
    taken.set(key, entry);
    const record = findSupported(entry.schema_id);
    if (!record) {
      plan.failures.push(failure('unknown_schema', `schema_id ${entry.schema_id} names no supported credential of this wallet (give a supported_cred_id or an identifier)`, [{ path: 'schema_id', message: 'unknown' }]));
      continue;
    }
    const days = entry.time_to_accept;
    if (!Number.isFinite(days) || days <= 0 || days > BULK_LIMITS.maxDaysToAccept || days * 86400 < CODE_LIFETIME.min) {
      plan.failures.push(failure('invalid_time_to_accept', `time_to_accept must be more than ${CODE_LIFETIME.min} seconds and at most ${BULK_LIMITS.maxDaysToAccept} days`, [{ path: 'time_to_accept', message: 'out of range' }]));
      continue;
    }
    let configuration = configs.get(record.supported_cred_id);
    if (!configuration) {
      configuration = issuableConfiguration(record);
      configs.set(record.supported_cred_id, configuration);
    }
    const { subject, problems } = subjectOf(configuration, entry.attributes);
    if (problems.length > 0) {
      plan.failures.push(failure('invalid_attributes', `attributes do not fit ${configuration.id}`, problems));
      continue;
    }
    plan.recipients.push({ email, given: entry.email, position, schemaId: entry.schema_id, supportedCredId: record.supported_cred_id, configuration, credentialSubject: subject, expiresIn: Math.round(days * 86400) });
  }
  return plan;
}
