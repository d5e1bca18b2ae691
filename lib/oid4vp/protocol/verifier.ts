import { parseOpenid4vpAuthorizationResponse } from '@openid4vc/openid4vp';
import { isDidSyntax, readDid } from '../../dids/records';
import { keys } from '../../store/keys';
import type { EventPublisher } from '../../events/publisher';
import { NotFoundError, ProtocolError } from '../../http/errors';
import type { KeyManager } from '../../keys/port';
import { issuerSigner } from '../../keys/signer';
import { oid4vcCallbacks } from '../../oid4vc/callbacks';
import type { TenantScope } from '../../store/keys';
import { type ItemStore } from '../../store/port';
import { lostRace } from '../../store/retry';
import { locateSubmission, matchDcql, matchDcqlForDefinition, matchDefinition, type MatchedCredentials } from '../query/match';
import { issuerPins } from '../query/pins';
import { loadTrustedIssuers } from '../trusted-issuers';
import { oid4vpKeys, presentationFromItem, requestObjectUrl, responseUrl, type InvalidReasonEntry, type PresentationRecord } from '../records';
import { clientIdOf, formatFamily, presentationTransition, settleExpiredPresentation } from '../presentations';
import { verifyJwtVpPresentation } from '../verification/jwt-vp';
import { outlineToken, type CredentialOutline } from '../verification/outline';
import { verifySdJwtPresentation } from '../verification/sd-jwt';
import { comparableIssuer, trustOf, trustPolicy, type TrustPolicy } from '../verification/trust';
import { PresentationInvalidError, type IssuerKeyResolver, type StatusChecker, type TrustReason, type VerificationContext, type VerifiedCredential } from '../verification/types';
import { authorizationRequestPayload, signRequestObject } from './request-object';

export interface VerifierProtocolDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly keyManager: KeyManager;
  readonly resolveIssuerKey: IssuerKeyResolver;
  readonly status: StatusChecker;
  /** How far a KB-JWT or VP `iat` may be from now. */
  readonly maxIatSkewSeconds?: number;
  readonly now?: () => Date;
}

/**
 * What one response may make the verifier do (docs/oid4vp.md, "Bounded verification"). Everything is
 * counted before the first fetch, and beyond a bound the response is refused (`limits_exceeded`);
 * the deadline covers the whole verification, and when it passes every fetch still in flight is
 * cancelled and the presentation ends `verification_timeout`.
 */
export const VERIFICATION_LIMITS = {
  /** One deadline for parsing, trust, every issuer key and status list fetch (in parallel) and matching. */
  deadlineMs: 4000,
  /** Credentials in one response (SD-JWT VCs, and VC-JWTs inside VPs): signatures to check. */
  credentials: 16,
  /** Distinct issuers: keys to resolve (up to two fetches each: metadata and its jwks_uri). */
  issuers: 12,
  /** Distinct status lists: fetches of up to 2 MB, each inflating to at most 16 MB. */
  statusLists: 12,
} as const;

/** One token of the vp_token to verify, as the request's structure places it. */
interface PlannedToken {
  readonly token: string;
  readonly format: string;
  readonly family: 'sd-jwt' | 'jwt';
  readonly requireKeyBinding: boolean;
  /** The DCQL credential id or input descriptor id refusals name. */
  readonly id: string;
  /** The ids (query or descriptor) whose issuer pins apply to the token's credential at `index`. */
  readonly pinIds: (index: number) => readonly string[];
}

const invalidRequest = (description: string, status = 400) => new ProtocolError(status, 'invalid_request', description);
const unknownRequest = () => new NotFoundError('No such presentation request', 'presentation_request_not_found');

type Form = Readonly<Record<string, string>>;

/**
 * The public verifier endpoints of one wallet (OpenID4VP 1.0 §5, §8.2): the request object, retrieved
 * once, and the `direct_post` response endpoint, which verifies what the wallet sends and records the
 * outcome on the presentation. Nothing here trusts the wallet: every credential is checked here and
 * matched against what the request asked.
 */
export class VerifierProtocol {
  private readonly now: () => Date;

  constructor(private readonly deps: VerifierProtocolDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  private async load(scope: TenantScope, presentationId: string): Promise<PresentationRecord> {
    const item = await this.deps.store.get(oid4vpKeys.presentation(scope, presentationId), { consistent: true });
    if (!item) throw unknownRequest();
    const settled = await settleExpiredPresentation(this.deps, scope, presentationFromItem(item), this.now());
    if (!settled) throw unknownRequest();
    return settled;
  }

  /**
   * The signed request object, in the form asked for; a request is handed out once (§5.10: its nonce is single use).
   * `verifier` is the wallet's verifier address the request came to, `<base>/oid4vp/<public_ref>` (operations.ts).
   */
  async requestObject(scope: TenantScope, presentationId: string, profile: 'v1' | 'draft', verifier: string): Promise<string> {
    const r = await this.load(scope, presentationId);
    if (r.state === 'expired') throw invalidRequest('This presentation request has expired');
    if (r.state !== 'request-created') throw invalidRequest('This request object was already retrieved: ask the verifier for a new request');
    if (profile === 'draft' && r.query.kind !== 'pe') throw invalidRequest('This request is a DCQL query: it has no draft (Presentation Exchange) form');
    const did = await readDid(this.deps.store, scope, r.verifier_did).catch(() => null);
    if (!did || did.deactivated_at) throw invalidRequest("The verifier's DID is no longer active");
    const payload = authorizationRequestPayload(r, profile, responseUrl(verifier, presentationId));
    const now = this.now();
    const signer = issuerSigner(this.deps.keyManager, scope, { ref: did.key_ref, alg: did.alg }, r.verification_method);
    const jws = await signRequestObject(payload, requestObjectUrl(verifier, presentationId), signer, did.public_jwk, now);
    const { ops } = presentationTransition(this.deps.events, scope, r, 'request-retrieved', now, { retrieved_as: profile });
    try {
      await this.deps.store.write(ops);
    } catch (err) {
      if (lostRace(err)) throw invalidRequest('This request object was already retrieved: ask the verifier for a new request');
      throw err;
    }
    return jws;
  }

  /**
   * The wallet's answer (`direct_post`). A response that cannot belong to this request (unknown,
   * unretrieved, answered, expired, another `state`) is refused and changes nothing; any other is
   * verified and ends the presentation as `presentation-valid` or `presentation-invalid`.
   */
  async response(scope: TenantScope, presentationId: string, form: Form, verifier: string): Promise<Record<string, never>> {
    // The trusted-issuers setting is read alongside the record: one round trip, not two.
    const [r, trusted] = await Promise.all([this.load(scope, presentationId), loadTrustedIssuers(this.deps.store, scope)]);
    if (r.state === 'expired') throw invalidRequest('This presentation request has expired');
    if (r.state === 'request-created') throw invalidRequest('The request object of this request was never retrieved');
    if (r.state !== 'request-retrieved') throw invalidRequest('This presentation request was already answered');
    if (form.state !== r.oauth_state) throw invalidRequest('state does not match the request');
    const retrievedAs = r.retrieved_as ?? 'v1';

    if (form.error !== undefined && form.vp_token === undefined) {
      const detail = `${form.error}${form.error_description ? `: ${form.error_description}` : ''}`.slice(0, 500);
      await this.finish(scope, r, { ok: false, errors: [{ code: 'wallet_error', detail }] });
      return {};
    }
    if (form.vp_token === undefined) throw invalidRequest('vp_token is missing');

    const policy = trustPolicy(trusted, async (did) => {
      // The issuer is the wallet's input: what cannot be a DID here (or a sort key) is no DID of the wallet.
      if (!isDidSyntax(did)) return false;
      const item = await this.deps.store.get(keys.did(scope, did));
      return item !== undefined && !item.deactivated_at;
    });
    const outcome = await this.verify(r, retrievedAs, form, verifier, policy).catch((err: unknown) => {
      if (err instanceof PresentationInvalidError) return { ok: false as const, errors: [{ code: err.reason, detail: err.detail.slice(0, 500), ...(err.credentialId ? { credential_id: err.credentialId } : {}) }] };
      throw err;
    });
    await this.finish(scope, r, outcome);
    if (!outcome.ok) throw invalidRequest(`The presentation was not accepted: ${outcome.errors.map((e) => e.code).join(', ')}`);
    return {};
  }

  private async finish(scope: TenantScope, r: PresentationRecord, outcome: { ok: true; matched: MatchedCredentials } | { ok: false; errors: InvalidReasonEntry[] }) {
    const at = this.now();
    const { ops } = outcome.ok
      ? presentationTransition(this.deps.events, scope, r, 'presentation-valid', at, { matched_credentials: outcome.matched, errors: null })
      : presentationTransition(this.deps.events, scope, r, 'presentation-invalid', at, { matched_credentials: null, errors: outcome.errors });
    try {
      await this.deps.store.write(ops);
    } catch (err) {
      // Another response for the same request won the race: this one changes nothing.
      if (lostRace(err)) throw invalidRequest('This presentation request was already answered');
      throw err;
    }
  }

  /**
   * The whole verification under one deadline. Its signal goes to every fetch; when the deadline
   * passes (or one credential has already failed) the fetches still in flight are cancelled. The race
   * also covers work that cannot be cancelled (store reads): the answer never waits past the deadline.
   */
  private async verify(r: PresentationRecord, form: 'v1' | 'draft', body: Form, verifier: string, policy: TrustPolicy): Promise<{ ok: true; matched: MatchedCredentials }> {
    const ms = VERIFICATION_LIMITS.deadlineMs;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const timeout = new PresentationInvalidError('verification_timeout', `the issuer keys and status lists were not all fetched within ${ms} ms (the verification deadline)`);
        controller.abort(timeout);
        reject(timeout);
      }, ms);
    });
    const work = this.verifyWithin(r, form, body, verifier, policy, controller);
    // Whichever loses the race settles unobserved.
    work.catch(() => undefined);
    deadline.catch(() => undefined);
    try {
      return await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
      if (!controller.signal.aborted) controller.abort(new Error('verification finished'));
    }
  }

  private async verifyWithin(r: PresentationRecord, form: 'v1' | 'draft', body: Form, verifier: string, policy: TrustPolicy, controller: AbortController): Promise<{ ok: true; matched: MatchedCredentials }> {
    const requestPayload = authorizationRequestPayload(r, form, responseUrl(verifier, r.presentation_id));
    let parsed: Awaited<ReturnType<typeof parseOpenid4vpAuthorizationResponse>>;
    try {
      parsed = await parseOpenid4vpAuthorizationResponse({
        authorizationResponse: { ...body },
        authorizationRequestPayload: requestPayload as never,
        callbacks: {
          verifyJwt: oid4vcCallbacks().verifyJwt,
          decryptJwe: async () => {
            throw new Error('responses are not encrypted (response_mode direct_post)');
          },
        },
      });
    } catch (err) {
      throw new PresentationInvalidError('malformed_presentation', err instanceof Error ? err.message.split('\n')[0]! : 'the response could not be parsed');
    }

    // 1. Structure, with no network: which token answers what, counted and bounded; issuers trusted.
    const pex = parsed.type === 'pex' ? planPex(r, parsed.pex.presentationSubmission, parsed.pex.presentations as unknown[]) : undefined;
    const planned: readonly PlannedToken[] = pex?.planned ?? planDcql(r, (parsed as Extract<typeof parsed, { type: 'dcql' }>).dcql.presentations);
    const outlines = planned.map((p) => withId(p.id, () => outlineToken(p.token, p.family)));
    if (parsed.type === 'dcql') {
      // One credential per presentation (no `multiple`): a VP carrying several is refused before any fetch.
      planned.forEach((p, t) => {
        if (outlines[t]!.length !== 1) throw new PresentationInvalidError('invalid_submission', `${p.id}: the presentation carries ${outlines[t]!.length} credentials; one is asked for`, p.id);
      });
    }
    checkLimits(outlines);
    const trust = await decideTrust(planned, outlines, issuerPins(r.query), policy);

    // 2. Every token at once, under the deadline; the first refusal cancels the others' fetches.
    const ctx: VerificationContext = {
      audiences: [clientIdOf(r.verifier_did, form)],
      nonce: r.nonce,
      now: this.now(),
      maxIatSkewSeconds: this.deps.maxIatSkewSeconds ?? 300,
      resolveIssuerKey: this.deps.resolveIssuerKey,
      status: this.deps.status,
      signal: controller.signal,
    };
    const verified = await Promise.all(
      planned.map((p, t) =>
        this.verifyOne(p.token, p.format, ctx, p.requireKeyBinding, p.id)
          .then((credentials) => credentials.map((c, k) => withTrust(c, outlines[t]![k], trust[t]![k], p.id)))
          .catch((err: unknown) => {
            if (!controller.signal.aborted) controller.abort(err);
            throw err;
          }),
      ),
    );

    // 3. What was verified, against what was asked.
    if (!pex) {
      const presented: Record<string, VerifiedCredential[]> = {};
      planned.forEach((p, t) => (presented[p.id] ??= []).push(...verified[t]!));
      // Native DCQL: 1.0 §6.4 — wallets MUST NOT send selectively disclosable claims that were not asked for.
      // From a definition: strict where it says limit_disclosure required, and its own constraints re-checked.
      const matched = r.query.kind === 'pe' ? matchDcqlForDefinition(r.query.definition as never, r.query.dcql as never, presented) : matchDcql(r.query.dcql as never, presented, { strict: true });
      return { ok: true, matched };
    }
    const byToken = new Map(pex.planned.map((p, t) => [p.tokenIndex, verified[t]!]));
    const byDescriptor: Record<string, VerifiedCredential> = {};
    for (const entry of pex.located) {
      const credentials = byToken.get(entry.tokenIndex)!;
      const credential = entry.nested ? credentials[entry.nested.index] : credentials[0];
      if (!credential) throw new PresentationInvalidError('invalid_submission', `${entry.descriptorId}: the submission points at a credential the presentation does not hold`, entry.descriptorId);
      byDescriptor[entry.descriptorId] = credential;
    }
    return { ok: true, matched: matchDefinition(pex.definition as never, byDescriptor) };
  }

  /** One presentation: an SD-JWT VC (with its KB-JWT), or a JWT VP carrying JWT VCs. */
  private async verifyOne(token: string, format: string, ctx: VerificationContext, requireKeyBinding: boolean, id: string): Promise<VerifiedCredential[]> {
    return withIdAsync(id, async () => {
      if (formatFamily(format) === 'sd-jwt') return [await verifySdJwtPresentation(token, ctx, { requireKeyBinding })];
      return (await verifyJwtVpPresentation(token, ctx)).credentials;
    });
  }
}

/** A refusal without a credential id gets the id of the query or descriptor being checked. */
function withId<T>(id: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof PresentationInvalidError && !err.credentialId) throw new PresentationInvalidError(err.reason, err.detail, id);
    throw err;
  }
}

async function withIdAsync<T>(id: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof PresentationInvalidError && !err.credentialId) throw new PresentationInvalidError(err.reason, err.detail, id);
    throw err;
  }
}

/** The family of a format this verifier checks; any other is refused before anything is fetched. */
function familyOf(format: string, id: string): 'sd-jwt' | 'jwt' {
  const family = formatFamily(format);
  if (!family) throw new PresentationInvalidError('unsupported_format', `${id}: format ${format} is not verified here`, id);
  return family;
}

/** A DCQL answer (1.0): one presentation per credential query id; `multiple` is never allowed here. */
function planDcql(r: PresentationRecord, presentations: Readonly<Record<string, readonly unknown[]>>): PlannedToken[] {
  const queries = (r.query.dcql.credentials as { id: string; format: string; require_cryptographic_holder_binding?: boolean; multiple?: boolean }[]) ?? [];
  const planned: PlannedToken[] = [];
  for (const [id, entries] of Object.entries(presentations)) {
    const q = queries.find((c) => c.id === id);
    if (!q) throw new PresentationInvalidError('invalid_submission', `vp_token has ${id}, which the query does not ask for`, id);
    if (entries.length > 1 && q.multiple !== true) throw new PresentationInvalidError('invalid_submission', `the vp_token holds ${entries.length} presentations for '${id}', which does not allow multiple`, id);
    for (const entry of entries) {
      if (typeof entry !== 'string') throw new PresentationInvalidError('unsupported_format', `${id}: only compact (string) presentations are verified`, id);
      planned.push({ token: entry, format: q.format, family: familyOf(q.format, id), requireKeyBinding: q.require_cryptographic_holder_binding !== false, id, pinIds: () => [id] });
    }
  }
  return planned;
}

/** A draft answer (Presentation Exchange): the tokens the submission points at, each once. */
function planPex(r: PresentationRecord, submission: unknown, tokens: readonly unknown[]) {
  if (r.query.kind !== 'pe') throw new PresentationInvalidError('invalid_submission', 'A presentation_submission answers a Presentation Exchange request; this request is a DCQL query');
  const definition = r.query.definition;
  const located = locateSubmission(definition as never, submission, tokens);
  const planned: (PlannedToken & { tokenIndex: number })[] = [];
  for (const entry of located) {
    if (planned.some((p) => p.tokenIndex === entry.tokenIndex)) continue;
    const token = tokens[entry.tokenIndex];
    if (typeof token !== 'string') throw new PresentationInvalidError('unsupported_format', `${entry.descriptorId}: only compact (string) presentations are verified`, entry.descriptorId);
    const mapped = located.filter((l) => l.tokenIndex === entry.tokenIndex);
    planned.push({
      token,
      tokenIndex: entry.tokenIndex,
      format: entry.format,
      family: familyOf(entry.format, entry.descriptorId),
      requireKeyBinding: true,
      id: entry.descriptorId,
      pinIds: (index) => mapped.filter((l) => (l.nested?.index ?? 0) === index).map((l) => l.descriptorId),
    });
  }
  return { planned, located, definition };
}

/** The response's credentials, issuers and status lists against {@link VERIFICATION_LIMITS}, before anything is fetched. */
function checkLimits(outlines: readonly (readonly CredentialOutline[])[]): void {
  const all = outlines.flat();
  const issuers = new Set(all.map((c) => comparableIssuer(c.issuer)));
  const lists = new Set(all.flatMap((c) => c.statusLists));
  const over = (what: string, n: number, max: number) =>
    new PresentationInvalidError('limits_exceeded', `the response holds ${n} ${what}; at most ${max} per response are verified`);
  if (all.length > VERIFICATION_LIMITS.credentials) throw over('credentials', all.length, VERIFICATION_LIMITS.credentials);
  if (issuers.size > VERIFICATION_LIMITS.issuers) throw over('distinct issuers', issuers.size, VERIFICATION_LIMITS.issuers);
  if (lists.size > VERIFICATION_LIMITS.statusLists) throw over('distinct status lists', lists.size, VERIFICATION_LIMITS.statusLists);
}

/**
 * Why each credential's issuer is trusted, decided before anything is fetched: an untrusted issuer
 * costs the verifier no request at all. Own-DID reads run side by side, once per issuer.
 */
async function decideTrust(
  planned: readonly PlannedToken[],
  outlines: readonly (readonly CredentialOutline[])[],
  pins: ReadonlyMap<string, ReadonlySet<string>>,
  policy: TrustPolicy,
): Promise<TrustReason[][]> {
  const ownDid = new Map<string, Promise<boolean>>();
  const cached: TrustPolicy = {
    ...policy,
    isOwnDid: (did) => {
      const key = comparableIssuer(did);
      if (!ownDid.has(key)) ownDid.set(key, policy.isOwnDid(did));
      return ownDid.get(key)!;
    },
  };
  return Promise.all(
    planned.map((p, t) =>
      Promise.all(
        outlines[t]!.map(async (c, k) => {
          const ids = p.pinIds(k);
          const pinned = new Set(ids.flatMap((id) => [...(pins.get(id) ?? [])]));
          const reason = await trustOf(c.issuer, ids.some((id) => pins.has(id)) ? pinned : undefined, cached);
          if (!reason)
            throw new PresentationInvalidError(
              'untrusted_issuer',
              `${c.issuer} is not a trusted issuer of this verifier: list it in PUT /api/v1/settings/trusted-issuers, or pin it in the request (an \`iss\` filter or DCQL values)`,
              ids[0] ?? p.id,
            );
          return reason;
        }),
      ),
    ),
  );
}

/** The verified credential with why its issuer is trusted; its issuer must be the one trust was decided for. */
function withTrust(c: VerifiedCredential, outline: CredentialOutline | undefined, reason: TrustReason | undefined, id: string): VerifiedCredential {
  if (!outline || !reason || comparableIssuer(outline.issuer) !== comparableIssuer(c.issuer)) throw new PresentationInvalidError('untrusted_issuer', `${c.issuer} was not checked for trust`, id);
  return { ...c, issuerTrust: reason };
}
