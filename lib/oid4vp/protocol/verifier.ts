import { parseOpenid4vpAuthorizationResponse } from '@openid4vc/openid4vp';
import { readDid } from '../../dids/records';
import type { EventPublisher } from '../../events/publisher';
import { NotFoundError, ProtocolError } from '../../http/errors';
import type { KeyManager } from '../../keys/port';
import { issuerSigner } from '../../keys/signer';
import { oid4vcCallbacks } from '../../oid4vc/callbacks';
import type { TenantScope } from '../../store/keys';
import { type ItemStore } from '../../store/port';
import { lostRace } from '../../store/retry';
import { locateSubmission, matchDcql, matchDcqlForDefinition, matchDefinition, type MatchedCredentials } from '../query/match';
import { oid4vpKeys, presentationFromItem, requestObjectUrl, responseUrl, type InvalidReasonEntry, type PresentationRecord } from '../records';
import { clientIdOf, formatFamily, presentationTransition, settleExpiredPresentation } from '../presentations';
import { verifyJwtVpPresentation } from '../verification/jwt-vp';
import { verifySdJwtPresentation } from '../verification/sd-jwt';
import { PresentationInvalidError, type IssuerKeyResolver, type StatusChecker, type VerificationContext, type VerifiedCredential } from '../verification/types';
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
    const r = await this.load(scope, presentationId);
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

    const outcome = await this.verify(r, retrievedAs, form, verifier).catch((err: unknown) => {
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

  private async verify(r: PresentationRecord, form: 'v1' | 'draft', body: Form, verifier: string): Promise<{ ok: true; matched: MatchedCredentials }> {
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
    const ctx: VerificationContext = {
      audiences: [clientIdOf(r.verifier_did, form)],
      nonce: r.nonce,
      now: this.now(),
      maxIatSkewSeconds: this.deps.maxIatSkewSeconds ?? 300,
      resolveIssuerKey: this.deps.resolveIssuerKey,
      status: this.deps.status,
    };

    if (parsed.type === 'dcql') {
      const credentialQueries = (r.query.dcql.credentials as { id: string; format: string; require_cryptographic_holder_binding?: boolean }[]) ?? [];
      const presented: Record<string, VerifiedCredential[]> = {};
      for (const [id, entries] of Object.entries(parsed.dcql.presentations)) {
        const q = credentialQueries.find((c) => c.id === id);
        if (!q) throw new PresentationInvalidError('invalid_submission', `vp_token has ${id}, which the query does not ask for`, id);
        presented[id] = [];
        for (const entry of entries) {
          if (typeof entry !== 'string') throw new PresentationInvalidError('unsupported_format', `${id}: only compact (string) presentations are verified`, id);
          presented[id]!.push(...(await this.verifyOne(entry, q.format, ctx, q.require_cryptographic_holder_binding !== false, id)));
        }
      }
      // Native DCQL: 1.0 §6.4 — wallets MUST NOT send selectively disclosable claims that were not asked for.
      // From a definition: strict where it says limit_disclosure required, and its own constraints re-checked.
      const matched = r.query.kind === 'pe' ? matchDcqlForDefinition(r.query.definition as never, r.query.dcql as never, presented) : matchDcql(r.query.dcql as never, presented, { strict: true });
      return { ok: true, matched: matched };
    }

    if (r.query.kind !== 'pe') throw new PresentationInvalidError('invalid_submission', 'A presentation_submission answers a Presentation Exchange request; this request is a DCQL query');
    const tokens = parsed.pex.presentations as unknown[];
    const located = locateSubmission(r.query.definition as never, parsed.pex.presentationSubmission, tokens);
    const cache = new Map<number, VerifiedCredential[]>();
    const byDescriptor: Record<string, VerifiedCredential> = {};
    for (const entry of located) {
      const token = tokens[entry.tokenIndex];
      if (typeof token !== 'string') throw new PresentationInvalidError('unsupported_format', `${entry.descriptorId}: only compact (string) presentations are verified`, entry.descriptorId);
      let verified = cache.get(entry.tokenIndex);
      if (!verified) {
        verified = await this.verifyOne(token, entry.format, ctx, true, entry.descriptorId);
        cache.set(entry.tokenIndex, verified);
      }
      const credential = entry.nested ? verified[entry.nested.index] : verified[0];
      if (!credential) throw new PresentationInvalidError('invalid_submission', `${entry.descriptorId}: the submission points at a credential the presentation does not hold`, entry.descriptorId);
      byDescriptor[entry.descriptorId] = credential;
    }
    return { ok: true, matched: matchDefinition(r.query.definition as never, byDescriptor) };
  }

  /** One presentation: an SD-JWT VC (with its KB-JWT), or a JWT VP carrying JWT VCs. */
  private async verifyOne(token: string, format: string, ctx: VerificationContext, requireKeyBinding: boolean, id: string): Promise<VerifiedCredential[]> {
    try {
      if (formatFamily(format) === 'sd-jwt') return [await verifySdJwtPresentation(token, ctx, { requireKeyBinding })];
      if (formatFamily(format) === 'jwt') return (await verifyJwtVpPresentation(token, ctx)).credentials;
    } catch (err) {
      if (err instanceof PresentationInvalidError && !err.credentialId) throw new PresentationInvalidError(err.reason, err.detail, id);
      throw err;
    }
    throw new PresentationInvalidError('unsupported_format', `${id}: format ${format} is not verified here`, id);
  }
}
