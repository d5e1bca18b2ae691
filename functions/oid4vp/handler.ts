import { createGroupHandler } from '../../lib/http/router';
import { oid4vpAdminContracts } from '../../lib/oid4vp/contract';
import { oid4vpAdminOperations } from '../../lib/oid4vp/operations';
import { VerifierService } from '../../lib/oid4vp/service';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('oid4vp', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'oid4vp',
  contracts: oid4vpAdminContracts,
  impls: oid4vpAdminOperations(new VerifierService({ store: deps.store, events: deps.events, allowLoopbackIssuers: deps.config.webhookAllowLoopback })),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
