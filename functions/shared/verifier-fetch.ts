import { guardedFetcher, type GuardedFetch } from '../../lib/adapters/guarded-http';
import type { Resolver } from '../../lib/webhooks/transport';
import type { Deps } from './deps';

/**
 * The SSRF-guarded GET of the OID4VP verifier (DID documents, issuer metadata, status lists). The
 * webhook setting decides loopback: only the local runtime allows it, and with it plain http.
 */
export function verifierFetch(deps: Deps, overrides: { readonly resolver?: Resolver } = {}): GuardedFetch {
  const local = deps.config.webhookAllowLoopback;
  return guardedFetcher({
    allowLoopback: local,
    allowHttp: local,
    timeoutMs: 3000,
    maxBytes: 2 * 1024 * 1024,
    ...(overrides.resolver ? { resolver: overrides.resolver } : {}),
    userAgent: `${deps.config.serviceName}-verifier/1`,
  });
}
