import type { EventPublisher } from '../events/publisher';
import type { TenantScope } from '../store/keys';
import { type ItemStore, type WriteOp } from '../store/port';
import { lostRace } from '../store/retry';
import { oid4vpKeys, PRESENTATION_EVENTS, presentationFromItem, type PresentationRecord, type PresentationState } from './records';

/**
 * What the admin API and the public verifier endpoints share about a presentation: its views, its
 * state changes (each with its event) and the verifier's client id. Kept apart from service.ts so the
 * verifier function does not bundle definition validation.
 */

/** Contract 2.6: the presentation as the API shows it (`errors`: ours, the reasons of `presentation-invalid`). */
export function presentationView(r: PresentationRecord, state: PresentationState = r.state) {
  return {
    presentation_id: r.presentation_id,
    pres_def_id: r.pres_def_id,
    request_id: r.request_id,
    wallet_id: r.wallet_id,
    state,
    matched_credentials: r.matched_credentials,
    // Derived, not stored: the state says whether (and how) the answer verified.
    verified: state === 'presentation-valid' ? true : state === 'presentation-invalid' ? false : null,
    errors: r.errors,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Contract 2.5: the request record (with the DCQL query it asks, and when it expires). */
export function requestView(r: PresentationRecord) {
  return {
    request_id: r.request_id,
    pres_def_id: r.pres_def_id,
    vp_formats: r.vp_formats,
    dcql_query: r.query.dcql,
    expires_at: new Date(r.expires_at).toISOString(),
    created_at: r.created_at,
    updated_at: r.created_at,
  };
}

/** The `client_id` of a DID-signed request: OpenID4VP 1.0 prefixes it (§5.9.3); draft wallets expect the bare DID. */
export const clientIdOf = (did: string, form: 'v1' | 'draft') => (form === 'v1' ? `decentralized_identifier:${did}` : did);

/**
 * A state change of a presentation and its event, conditional on the state it leaves: every change
 * goes through here, so each publishes exactly one event.
 */
export function presentationTransition(
  events: EventPublisher,
  scope: TenantScope,
  r: PresentationRecord,
  to: Exclude<PresentationState, 'request-created'>,
  at: Date,
  set: Readonly<Record<string, unknown>> = {},
): { ops: WriteOp[]; next: PresentationRecord } {
  const updated_at = at.toISOString();
  const next = { ...r, ...set, state: to, updated_at } as PresentationRecord;
  return {
    next,
    ops: [
      { type: 'update', key: oid4vpKeys.presentation(scope, r.presentation_id), set: { ...set, state: to, updated_at }, condition: { equals: { state: r.state } } },
      events.stage(scope, PRESENTATION_EVENTS[to], presentationView(next)).op,
    ],
  };
}

/** A request past its lifetime that was never answered becomes `expired` when noticed (read, retrieved or answered). */
export async function settleExpiredPresentation(deps: { store: ItemStore; events: EventPublisher }, scope: TenantScope, r: PresentationRecord, now: Date): Promise<PresentationRecord | null> {
  if (!(r.state === 'request-created' || r.state === 'request-retrieved') || now.getTime() <= r.expires_at) return r;
  const { ops, next } = presentationTransition(deps.events, scope, r, 'expired', now);
  try {
    await deps.store.write(ops);
    return next;
  } catch (err) {
    if (!lostRace(err)) throw err;
    const again = await deps.store.get(oid4vpKeys.presentation(scope, r.presentation_id), { consistent: true });
    return again ? presentationFromItem(again) : null;
  }
}

/** SD-JWT VC's two media types are one family; so are JWT VCs and the JWT VPs that carry them. */
export function formatFamily(format: string): 'sd-jwt' | 'jwt' | null {
  if (format === 'dc+sd-jwt' || format === 'vc+sd-jwt') return 'sd-jwt';
  if (format === 'jwt_vc_json' || format === 'jwt_vp_json') return 'jwt';
  return null;
}

