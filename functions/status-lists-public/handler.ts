import { createGroupHandler } from '../../lib/http/router';
import { statusListPublicContracts } from '../../lib/status-lists/contract';
import { statusListPublicOperations } from '../../lib/status-lists/operations';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildKeyManager } from '../shared/issuer-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('status-lists-public', { sessions: walletSessions });
// One cache for the path's lookups and the lists' URLs (the reference ↔ wallet mapping never changes).
const refs = new PublicRefs(deps.store);
const publisher = new StatusListPublisher({ store: deps.store, keyManager: buildKeyManager(deps), events: deps.events, refs });

export const handler = createGroupHandler({
  group: 'status-lists-public',
  contracts: statusListPublicContracts,
  impls: statusListPublicOperations(publisher, refs),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
