import { createGroupHandler } from '../../lib/http/router';
import { oid4vpAdminContracts } from '../../lib/oid4vp/contract';
import { oid4vpAdminOperations } from '../../lib/oid4vp/operations';
import { VerifierService } from '../../lib/oid4vp/service';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('oid4vp', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'oid4vp',
  contracts: oid4vpAdminContracts,
  // The wallet's public reference names it in its request URIs (read from its record once, then cached).
  impls: oid4vpAdminOperations(new VerifierService({ store: deps.store, events: deps.events, refs: new PublicRefs(deps.store), allowLoopbackIssuers: deps.config.webhookAllowLoopback })),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
