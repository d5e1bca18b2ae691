import { setGlobalConfig } from '@openid4vc/utils';
import { createGroupHandler } from '../../lib/http/router';
import { oid4vpPublicContracts } from '../../lib/oid4vp/contract';
import { oid4vpPublicOperations } from '../../lib/oid4vp/operations';
import { VerifierProtocol } from '../../lib/oid4vp/protocol/verifier';
import { createIssuerKeyResolver } from '../../lib/oid4vp/verification/issuer-keys';
import { createStatusChecker } from '../../lib/oid4vp/verification/status';
import { DidResolver } from '../../lib/resolver/resolver';
import { withOwnRole } from '../../lib/store/session';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildKeyManager } from '../shared/issuer-keys';
import { walletSessions } from '../shared/sessions';
import { verifierFetch } from '../shared/verifier-fetch';

const deps = buildDeps('oid4vp-verifier', { sessions: walletSessions });
// The libraries insist on https identifiers; the local runtime serves plain http on loopback only.
if (deps.config.keyBackend === 'local' && deps.config.publicBaseUrl?.startsWith('http://')) setGlobalConfig({ allowInsecureUrls: true });

const fetch = verifierFetch(deps);
const dids = new DidResolver(deps.store);
// Published DIDs are read through the PublicDids index with the function's own role, never a wallet's session.
const resolveIssuerKey = createIssuerKeyResolver({ didResolver: { resolve: (did) => withOwnRole(() => dids.resolve(did)) }, fetch, httpForLoopbackHosts: deps.config.webhookAllowLoopback });

export const handler = createGroupHandler({
  group: 'oid4vp-verifier',
  contracts: oid4vpPublicContracts,
  impls: oid4vpPublicOperations(
    new VerifierProtocol({ store: deps.store, events: deps.events, keyManager: buildKeyManager(deps), resolveIssuerKey, status: createStatusChecker({ fetch, resolveIssuerKey }) }),
    new PublicRefs(deps.store),
  ),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
