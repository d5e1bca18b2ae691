import { BadRequestError, type ErrorDetail } from '../http/errors';
import type { TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import { oid4vpKeys } from './records';
import { ANY_ISSUER, comparableIssuer, MAX_TRUSTED_ISSUERS, trustedIssuerProblem } from './verification/trust';

/**
 * A wallet's trusted-issuers setting (`/api/v1/settings/trusted-issuers`): the issuers whose
 * credentials its verifier accepts besides its own DIDs and those a request pins. One item in the
 * wallet's partition, replaced whole by PUT (as the webhook target list is).
 */

export async function loadTrustedIssuers(store: ItemStore, scope: TenantScope): Promise<string[]> {
  const item = await store.get(oid4vpKeys.trustedIssuers(scope));
  return Array.isArray(item?.issuers) ? (item.issuers as string[]) : [];
}

/** Checks every entry (400 `invalid_trusted_issuers`, each problem with its path), then stores the list as given. */
export async function saveTrustedIssuers(store: ItemStore, scope: TenantScope, issuers: readonly string[], opts: { readonly allowLoopbackHttp: boolean; readonly at: Date }): Promise<string[]> {
  const details: ErrorDetail[] = [];
  if (issuers.length > MAX_TRUSTED_ISSUERS) details.push({ path: 'issuers', message: `at most ${MAX_TRUSTED_ISSUERS} issuers` });
  const seen = new Map<string, number>();
  issuers.forEach((issuer, i) => {
    const path = `issuers.${i}`;
    if (issuer === ANY_ISSUER) {
      if (issuers.length > 1) details.push({ path, message: `"${ANY_ISSUER}" (any issuer) must be the only entry` });
      return;
    }
    const problem = trustedIssuerProblem(issuer, opts);
    if (problem) return void details.push({ path, message: problem });
    const key = comparableIssuer(issuer);
    const first = seen.get(key);
    if (first !== undefined) details.push({ path, message: `the same issuer as issuers.${first}` });
    else seen.set(key, i);
  });
  if (details.length) throw new BadRequestError('Invalid trusted issuer(s): each must be a DID or an https issuer URL, or the list ["*"]', 'invalid_trusted_issuers', details);
  await store.write([{ type: 'put', item: { ...oid4vpKeys.trustedIssuers(scope), type: 'oid4vp_trusted_issuers', issuers: [...issuers], updated_at: opts.at.toISOString() } }]);
  return [...issuers];
}
